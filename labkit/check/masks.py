"""Exercises of lab 02: the document-causal mask and the packed prediction mask."""

from __future__ import annotations

import numpy as np

from labkit.check._support import first_bad_index
from labkit.check.core import CheckResult, as_array, call, exercise, failure, passed

_PACKINGS = {
    "two packed documents of four tokens (the lab's row)": (0, 0, 0, 0, 1, 1, 1, 1),
    "three documents of lengths 2, 3 and 3": (0, 0, 1, 1, 1, 2, 2, 2),
    "one document (plain causal)": (7, 7, 7, 7, 7),
    "four single-token documents": (0, 1, 2, 3),
    "document IDs that do not start at 0": (3, 3, 3, 8, 8),
}


@exercise("document_causal_mask", page="notebooks/11-labs/02-masks-and-packing.md", signature=("document_ids",))
def document_causal_mask(candidate) -> CheckResult:
    """return allowed [T, T] (bool): query i may attend to key j when j ≤ i and both tokens belong
    to the same document (document_ids [T] int)"""
    from labkit.labs.masks import document_causal_allowed

    for case, ids in _PACKINGS.items():
        ids = np.array(ids, dtype=np.int64)
        expected = document_causal_allowed(ids)
        got = as_array(call(candidate, ids.copy()), "allowed", shape=expected.shape, dtype_kind="bool")
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        i, j = bad
        if got[i, j] and j > i:
            rule = "no query sees a key in its future (j ≤ i)"
            hint = "the causal half of the mask: position i may only look back, never ahead"
        elif got[i, j]:
            rule = "a query sees only keys of its own document"
            hint = (
                "packing puts several documents in one row; attention must stop at the document boundary, "
                "or one document reads another that it has nothing to do with"
            )
        elif i == j:
            rule = "every query sees its own position"
            hint = "j ≤ i includes j = i: without it the first token of a document has nothing to attend to"
        else:
            rule = "a query sees every earlier key of its own document"
            hint = "inside one document the mask is ordinary causal attention"
        return failure(
            "a mask entry is wrong",
            where=f"case “{case}”, allowed[{i}, {j}] (query {i} in document {ids[i]}, key {j} in document {ids[j]})",
            rule=rule,
            got=bool(got[i, j]),
            expected=bool(expected[i, j]),
            hint=hint,
        )
    return passed(f"all {len(_PACKINGS)} packed rows give the right mask")


@exercise("packed_prediction_mask", page="notebooks/11-labs/02-masks-and-packing.md", signature=("document_ids",))
def packed_prediction_mask(candidate) -> CheckResult:
    """return [T − 1] booleans: prediction i (token i predicts token i + 1) is supervised only when
    both tokens belong to the same document (document_ids [T] int)"""
    from labkit.labs.masks import packing_prediction_mask

    for case, ids in _PACKINGS.items():
        ids = np.array(ids, dtype=np.int64)
        expected = packing_prediction_mask(ids)
        raw = np.asarray(call(candidate, ids.copy()))
        if raw.ndim != 1 or raw.shape != expected.shape:
            return failure(
                "the mask has the wrong length",
                where=f"case “{case}”",
                rule=f"T tokens give T − 1 = {expected.size} predictions",
                got=list(raw.shape),
                expected=list(expected.shape),
                hint="prediction i reads token i and is scored on token i + 1; the last token has "
                "no next token, so it makes no prediction",
            )
        got = as_array(raw, "the prediction mask", dtype_kind="bool")
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        (i,) = bad
        if got[i]:
            rule = "a prediction that crosses into the next document is not supervised"
            hint = (
                "the last token of one document does not predict the first token of the next; "
                "look at the document of token i and of token i + 1"
            )
        else:
            rule = "a prediction inside one document is supervised"
            hint = "token i and token i + 1 are in the same document here, so this prediction counts"
        return failure(
            "a prediction is flagged wrongly",
            where=f"case “{case}”, prediction {i} (token {i} in document {ids[i]} → "
            f"token {i + 1} in document {ids[i + 1]})",
            rule=rule,
            got=bool(got[i]),
            expected=bool(expected[i]),
            hint=hint,
        )
    return passed(f"all {len(_PACKINGS)} packed rows give the right prediction mask")
