"""Exercises of the first five chapter-11 labs: CE gradient, masks, causal attention, the KV cache.

Each checker feeds the reader's function the lab's own inputs (the chapter's seeded cases and
a few more), compares with labkit's reference numbers, and stops at the first divergence.
Hints name the idea that was missed; they are chosen by recognising the usual mistakes
(a missing 1/M, a mask applied after the softmax, a query that forgets the cache, …).

Inputs are always copies, so a candidate that writes into its arguments cannot disturb the
reference.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import (
    CandidateProblem,
    CheckResult,
    as_array,
    call,
    exercise,
    first_bad_index,
    non_finite_index,
    numeric_array,
    quiet_call,
    unpack,
)

_ATOL = 1e-12


# --- 01: the masked cross-entropy gradient ---------------------------------------------------

def _ce_cases() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    from labkit.labs import masks

    many = np.random.default_rng(2026).normal(0.0, 2.0, size=(5, 6))
    return {
        "the lab's row z = [ln 2, 0, 0], target 2": (
            np.array([[np.log(2.0), 0.0, 0.0]]), np.array([2]), np.array([True])),
        "the seeded [3, 4] batch, row 1 left out of the loss": (
            np.random.default_rng(masks.MASKED_SEED).normal(size=(3, 4)),
            np.array(masks.MASKED_TARGETS), np.array(masks.MASKED_VALID)),
        "logits in the thousands": (
            np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]]), np.array([0, 2]), np.array([True, True])),
        "a [5, 6] batch with only rows 1 and 4 supervised": (
            many, np.array([0, 5, 2, 3, 1]), np.array([False, True, False, False, True])),
    }


def _ce_reference(logits, targets, valid) -> np.ndarray:
    from labkit.labs.common import masked_cross_entropy

    return masked_cross_entropy(logits, targets, valid)[1]


@exercise(
    "masked_ce_gradient",
    page="notebooks/11-labs/01-cross-entropy-gradient.md",
    signature=("logits", "targets", "valid"),
    task="return ∂L/∂logits [N, V] of the mean cross-entropy over the supervised rows "
         "(logits [N, V] float, targets [N] int, valid [N] bool)",
)
def masked_ce_gradient(candidate) -> CheckResult:
    name = "masked_ce_gradient"
    for case, (logits, targets, valid) in _ce_cases().items():
        expected = _ce_reference(logits, targets, valid)
        got = numeric_array(quiet_call(candidate, logits.copy(), targets.copy(), valid.copy()),
                       "the gradient", expected.shape)
        broken = non_finite_index(got)
        if broken is not None:
            return CheckResult(name, False, "the gradient is not finite", where=f"case “{case}”, gradient{list(broken)}",
                               rule="every entry is a finite number", got=got[broken].item(),
                               expected=expected[broken].item(),
                               hint="exp(1000) overflows; softmax does not change when the same number is "
                                    "subtracted from every logit of a row, so shift each row by its largest logit first")
        for row in np.flatnonzero(~valid):
            bad = first_bad_index(got[row], expected[row])
            if bad is not None:
                return CheckResult(name, False, "a row outside the loss has a gradient",
                                   where=f"case “{case}”, gradient[{row}, {bad[0]}] (row {row} is not supervised)",
                                   rule="an unsupervised row has exactly zero gradient",
                                   got=got[row][bad].item(), expected=0.0,
                                   hint="the mask takes the row out of the loss, so none of its logits can change "
                                        "the loss: its whole gradient row must be zero")
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        supervised = int(valid.sum())
        kept = valid[:, None]
        if np.allclose(got, -expected, atol=_ATOL, rtol=0.0):
            hint = ("the sign is flipped: raising the target's logit lowers the loss, so its entry is p_y − 1 < 0, "
                    "and every other entry p_i is positive")
        elif supervised != valid.size and np.allclose(got, expected * supervised / valid.size, atol=_ATOL, rtol=0.0):
            hint = (f"the loss is a mean over the {supervised} supervised rows, not over all {valid.size} rows: "
                    "divide by the number of rows the mask keeps")
        elif np.allclose(got * kept, expected * supervised, atol=_ATOL, rtol=0.0):
            hint = (f"L is a mean over the {supervised} supervised rows, so each row's gradient "
                    f"carries a factor 1/{supervised}")
        elif not np.allclose(got.sum(axis=1), 0.0, atol=1e-9, rtol=0.0):
            hint = ("each supervised row is a probability vector minus a one-hot vector, so it sums to zero; "
                    "yours does not — check the softmax and the −1 at the target")
        else:
            hint = ("per supervised row: the softmax of its logits minus one at the target, "
                    "then the factor of the mean over supervised rows")
        return CheckResult(name, False, "the gradient differs from ∂L/∂z",
                           where=f"case “{case}”, gradient{list(bad)}",
                           rule="∂L/∂z_n = valid_n · (softmax(z_n) − onehot(y_n)) / M (within 1e-12)",
                           got=got[bad].item(), expected=expected[bad].item(), hint=hint)
    return CheckResult(name, True, f"all {len(_ce_cases())} batches match, "
                                   "including the lab's [0.5, 0.25, −0.75]")


# --- 02: packing masks ---------------------------------------------------------------------

_PACKINGS = {
    "two packed documents of four tokens (the lab's row)": (0, 0, 0, 0, 1, 1, 1, 1),
    "three documents of lengths 2, 3 and 3": (0, 0, 1, 1, 1, 2, 2, 2),
    "one document (plain causal)": (7, 7, 7, 7, 7),
    "four single-token documents": (0, 1, 2, 3),
    "document IDs that do not start at 0": (3, 3, 3, 8, 8),
}


@exercise(
    "document_causal_mask",
    page="notebooks/11-labs/02-masks-and-packing.md",
    signature=("document_ids",),
    task="return allowed [T, T] (bool): query i may attend to key j when j ≤ i and both tokens "
         "belong to the same document (document_ids [T] int)",
)
def document_causal_mask(candidate) -> CheckResult:
    from labkit.labs.masks import document_causal_allowed

    name = "document_causal_mask"
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
            hint = ("packing puts several documents in one row; attention must stop at the document boundary, "
                    "or one document reads another that it has nothing to do with")
        elif i == j:
            rule = "every query sees its own position"
            hint = "j ≤ i includes j = i: without it the first token of a document has nothing to attend to"
        else:
            rule = "a query sees every earlier key of its own document"
            hint = "inside one document the mask is ordinary causal attention"
        return CheckResult(name, False, "a mask entry is wrong",
                           where=f"case “{case}”, allowed[{i}, {j}] (query {i} in document {ids[i]}, "
                                 f"key {j} in document {ids[j]})",
                           rule=rule, got=bool(got[i, j]), expected=bool(expected[i, j]), hint=hint)
    return CheckResult(name, True, f"all {len(_PACKINGS)} packed rows give the right mask")


@exercise(
    "packed_prediction_mask",
    page="notebooks/11-labs/02-masks-and-packing.md",
    signature=("document_ids",),
    task="return [T − 1] booleans: prediction i (token i predicts token i + 1) is supervised only "
         "when both tokens belong to the same document (document_ids [T] int)",
)
def packed_prediction_mask(candidate) -> CheckResult:
    from labkit.labs.masks import packing_prediction_mask

    name = "packed_prediction_mask"
    for case, ids in _PACKINGS.items():
        ids = np.array(ids, dtype=np.int64)
        expected = packing_prediction_mask(ids)
        raw = np.asarray(call(candidate, ids.copy()))
        if raw.ndim != 1 or raw.shape != expected.shape:
            return CheckResult(name, False, "the mask has the wrong length", where=f"case “{case}”",
                               rule=f"T tokens give T − 1 = {expected.size} predictions",
                               got=list(raw.shape), expected=list(expected.shape),
                               hint="prediction i reads token i and is scored on token i + 1; the last token has "
                                    "no next token, so it makes no prediction")
        got = as_array(raw, "the prediction mask", dtype_kind="bool")
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        (i,) = bad
        if got[i]:
            rule = "a prediction that crosses into the next document is not supervised"
            hint = ("the last token of one document does not predict the first token of the next; "
                    "look at the document of token i and of token i + 1")
        else:
            rule = "a prediction inside one document is supervised"
            hint = "token i and token i + 1 are in the same document here, so this prediction counts"
        return CheckResult(name, False, "a prediction is flagged wrongly",
                           where=f"case “{case}”, prediction {i} (token {i} in document {ids[i]} → "
                                 f"token {i + 1} in document {ids[i + 1]})",
                           rule=rule, got=bool(got[i]), expected=bool(expected[i]), hint=hint)
    return CheckResult(name, True, f"all {len(_PACKINGS)} packed rows give the right prediction mask")


# --- 03: causal self-attention -------------------------------------------------------------

def _attention_cases() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    from labkit.labs.causal_attention import PERTURB_FROM, PREFIX_SEED

    x = np.random.default_rng(PREFIX_SEED).normal(size=(1, 5, 4))[0]
    pushed = x.copy()
    pushed[PERTURB_FROM:] += 100.0
    other = np.random.default_rng(5).normal(0.0, 1.5, size=(3, 6, 8))
    return {
        "the hand example as row 1 of two tokens": (
            np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]),
            np.array([[2.0, 0.0], [0.0, 4.0]])),
        "the lab's seeded five tokens (q = k = v = x)": (x, x, x),
        f"the same five tokens, positions ≥ {PERTURB_FROM} pushed by +100": (pushed, pushed, pushed),
        "six tokens with d_h = 8 and separate q, k, v": tuple(other),
    }


def _attend(q, k, v, allowed):
    from labkit.nn.attention import attention

    output, weights = attention(q[None], k[None], v[None], allowed)
    return output[0], weights[0]


@exercise(
    "causal_self_attention",
    page="notebooks/11-labs/03-causal-attention.md",
    signature=("q", "k", "v"),
    task="one head of causal self-attention: q, k, v [T, d_h] → (output [T, d_h], weights [T, T]), "
         "scores q·kᵀ/√d_h, key j visible to query i only when j ≤ i",
)
def causal_self_attention(candidate) -> CheckResult:
    name = "causal_self_attention"
    for case, (q, k, v) in _attention_cases().items():
        t, head_dim = q.shape
        allowed = np.tril(np.ones((t, t), dtype=bool))
        expected_out, expected_w = _attend(q, k, v, allowed)
        output, weights = unpack(quiet_call(candidate, q.copy(), k.copy(), v.copy()), ("output", "weights"))
        weights = as_array(weights, "weights", shape=(t, t), dtype_kind="float")
        output = as_array(output, "output", shape=(t, head_dim), dtype_kind="float")
        where = f"case “{case}”"
        bad = first_bad_index(weights, expected_w)
        if bad is not None:
            i, j = bad
            unscaled = _attend(q * np.sqrt(head_dim), k, v, allowed)[1]
            leaks = np.flatnonzero(weights[i, i + 1:] != 0.0)
            if leaks.size:                      # the row's root cause: weight on a future key
                j = i + 1 + int(leaks[0])
                rule = "zero weight on every future key (j > i)"
                hint = ("a future key must be removed before the softmax (its score becomes −∞), so it gets "
                        "exactly zero weight and cannot leak into the past")
            elif abs(weights[i].sum() - 1.0) > 1e-9:
                rule = f"each row of weights sums to 1 (row {i} sums to {weights[i].sum():.6g})"
                hint = ("the softmax must normalise over the keys the query may see; zeroing weights after a "
                        "softmax over all keys leaves the row short of 1")
            elif np.allclose(weights, unscaled, atol=_ATOL, rtol=0.0):
                rule = "scores are q·k divided by √d_h"
                hint = (f"without the 1/√d_h factor (here √{head_dim}) the scores grow with the head size "
                        "and the softmax becomes too sharp")
            else:
                rule = "weights[i] = softmax over j ≤ i of q_i·k_j / √d_h"
                hint = "score each visible key, scale, and normalise the row with a softmax"
            return CheckResult(name, False, "an attention weight is wrong", where=f"{where}, weights[{i}, {j}]",
                               rule=rule, got=weights[i, j].item(), expected=expected_w[i, j].item(), hint=hint)
        bad = first_bad_index(output, expected_out)
        if bad is not None:
            return CheckResult(name, False, "the weights are right but the output is not",
                               where=f"{where}, output{list(bad)}",
                               rule="output[i] = Σ_j weights[i, j] · v[j]",
                               got=output[bad].item(), expected=expected_out[bad].item(),
                               hint="each output row is the weighted average of the value rows, "
                                    "with that query's weights")
    hand_output = _attend(*_attention_cases()["the hand example as row 1 of two tokens"],
                          np.tril(np.ones((2, 2), dtype=bool)))
    return CheckResult(name, True, f"all {len(_attention_cases())} cases match; the hand example gives weights "
                                   f"{np.round(hand_output[1][1], 4).tolist()} and output "
                                   f"{np.round(hand_output[0][1], 4).tolist()}, and the pushed future leaves "
                                   "the prefix untouched")


# --- 04: one cached decode step of attention, driven through the lab decoder ---------------

def _reference_step(q, cache_k, cache_v, k_new, v_new):
    """The runtime's own pieces: ``KVCache.append`` for the cache, the decoder's causal mask and
    ``attention``.  q, k_new, v_new [B, H, 1, d_h]; cache_k, cache_v [B, H, T, d_h]."""
    from labkit.nn import KVCache, attention, causal_allowed

    cache = KVCache(1)
    if cache_k.shape[-2]:
        cache.keys[0], cache.values[0] = cache_k, cache_v
    keys, values = cache.append(0, k_new, v_new)
    length = keys.shape[-2]
    output, _ = attention(q, keys, values, causal_allowed(np.array([length - 1]), np.arange(length)))
    return output, keys, values


def _rotated_projections(model, w, x, position) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Layer input x [1, 1, d] → q, k, v [1, H, 1, d_h]; q and k carry RoPE at ``position`` [1]."""
    from labkit.nn import rms_norm, rope

    cfg = model.config
    normed = rms_norm(x, cfg.norm_eps)
    q, k, v = (model._split_heads(normed @ w[name], cfg.n_kv_heads) for name in ("q", "k", "v"))
    return rope(q, position, cfg.rope_base), rope(k, position, cfg.rope_base), v


def _feed_forward_block(model, w, x) -> np.ndarray:
    """x + (SiLU(z·W_gate) ⊙ z·W_up)·W_down with z = RMSNorm(x);  [1, 1, d] → [1, 1, d]."""
    from labkit.nn import rms_norm

    z = rms_norm(x, model.config.norm_eps)
    gate, up = z @ w["gate"], z @ w["up"]
    return x + (gate * up / (1.0 + np.exp(-gate))) @ w["down"]


def decode_with_attention_step(step, model, tokens) -> np.ndarray:
    """Decode ``tokens`` [T] one at a time through ``model``'s layers with ``step`` as the cached attention.

    ``step(t, layer, q, cache_k, cache_v, k_new, v_new) -> (output, keys, values)`` with
    q, k_new, v_new [1, H, 1, d_h] (already rotated by RoPE at position t), cache_k/cache_v
    [1, H, t, d_h]; it returns the attention output [1, H, 1, d_h] and the grown cache
    [1, H, t + 1, d_h].  Everything else — embedding, RMSNorm, RoPE, projections, SwiGLU, the
    head — is the model's own weights and labkit.nn's functions.  Returns logits [T, V].
    """
    from labkit.nn import rms_norm

    cfg, weights = model.config, model.weights
    if cfg.group_size != 1:
        raise ValueError(f"the driver expects multi-head attention (group size 1), got {cfg.group_size}")
    empty = np.zeros((1, cfg.n_kv_heads, 0, cfg.head_dim), dtype=np.dtype(cfg.dtype))
    cached = [(empty, empty) for _ in range(cfg.n_layers)]          # per layer: (K, V)
    logits = np.empty((len(tokens), cfg.vocab_size), dtype=np.dtype(cfg.dtype))
    for t, token in enumerate(np.asarray(tokens)):
        hidden = weights.embedding[[[int(token)]]]                    # [1, 1, d]
        for layer, w in enumerate(weights.layers):
            q, k, v = _rotated_projections(model, w, hidden, np.array([t]))
            attended, *cached[layer] = step(t, layer, q, *cached[layer], k, v)
            hidden = _feed_forward_block(model, w, hidden + model._merge_heads(attended) @ w["o"])
        logits[t] = (rms_norm(hidden, cfg.norm_eps) @ weights.output)[0, 0]
    return logits


class _Divergence(Exception):
    def __init__(self, result: CheckResult):
        self.result = result


@exercise(
    "cached_attention_step",
    page="notebooks/11-labs/04-kv-cache-equivalence.md",
    signature=("q", "cache_k", "cache_v", "k_new", "v_new"),
    task="one decode step of attention with a KV cache: append k_new, v_new [B, H, 1, d_h] to "
         "cache_k, cache_v [B, H, T, d_h] and attend q [B, H, 1, d_h] to all T + 1 positions; "
         "return (output [B, H, 1, d_h], keys [B, H, T+1, d_h], values [B, H, T+1, d_h])",
)
def cached_attention_step(candidate) -> CheckResult:
    from labkit.labs.cache_equivalence import ABS_TOLERANCE, full_logits
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    name = "cached_attention_step"
    model, tokens = lab_decoder(), lab_tokens()

    def step(t, layer, q, cache_k, cache_v, k_new, v_new):
        where = f"decode step {t} (token {int(tokens[t])} at position {t}), layer {layer}"
        ref_out, ref_k, ref_v = _reference_step(q, cache_k, cache_v, k_new, v_new)
        got = quiet_call(candidate, q.copy(), cache_k.copy(), cache_v.copy(), k_new.copy(), v_new.copy())
        try:
            got = unpack(got, ("output", "keys", "values"))
            out = numeric_array(got[0], "output", ref_out.shape)
        except CandidateProblem as problem:
            raise CandidateProblem(f"at {where}: {problem}") from None
        for label, array, ref in (("keys", got[1], ref_k), ("values", got[2], ref_v)):
            array = np.asarray(array)
            if array.shape != ref.shape:
                raise _Divergence(CheckResult(
                    name, False, f"the returned {label} have the wrong shape", where=where,
                    rule=f"the cache grows by one position along axis −2: [B, H, {t}, d_h] → [B, H, {t + 1}, d_h]",
                    got=list(array.shape), expected=list(ref.shape),
                    hint="append the new entry to what is cached (do not replace it), along the position "
                         "axis; the next step needs every earlier position"))
            bad = first_bad_index(numeric_array(array, label, ref.shape), ref)
            if bad is not None:
                hint = (f"cache position p must hold token p's {label[:-1]}: keep the old positions in order "
                        "and put the new one last")
                raise _Divergence(CheckResult(
                    name, False, f"the returned {label} differ from the cache", where=f"{where}, {label}{list(bad)}",
                    rule="returned cache = old cache followed by the new position", got=array[bad].item(),
                    expected=ref[bad].item(), hint=hint))
        broken = non_finite_index(out)
        bad = broken if broken is not None else first_bad_index(out, ref_out)
        if bad is not None:
            only_new = _reference_step(q, cache_k[..., :0, :], cache_v[..., :0, :], k_new, v_new)[0]
            unscaled = _reference_step(q * np.sqrt(q.shape[-1]), cache_k, cache_v, k_new, v_new)[0]
            cache_only = (_reference_step(q, cache_k[..., :-1, :], cache_v[..., :-1, :], cache_k[..., -1:, :],
                                          cache_v[..., -1:, :])[0] if t else None)
            if cache_only is not None and np.allclose(out, cache_only, atol=_ATOL, rtol=0.0):
                hint = ("the query attended to the cached positions only; the new token's own key and value "
                        "belong to the keys it attends to")
            elif broken is not None:
                hint = ("the output is not finite; at step 0 the cache is empty and the new key is the only "
                        "one, so the query must attend to its own position too")
            elif np.allclose(out, only_new, atol=_ATOL, rtol=0.0):
                hint = ("the query attended to the new token only; the point of the cache is that it also sees "
                        "every earlier position")
            elif np.allclose(out, unscaled, atol=_ATOL, rtol=0.0):
                hint = "scores are q·k divided by √d_h, as in the full pass"
            else:
                hint = ("the new query sits at the last position, so every cached key and its own key are "
                        "visible: softmax over all T + 1 scaled scores, then average the values")
            raise _Divergence(CheckResult(
                name, False, "the attention output differs", where=f"{where}, output{list(bad)}",
                rule="output = softmax(q·Kᵀ/√d_h) · V over all T + 1 cached positions (within 1e-12)",
                got=out[bad].item(), expected=ref_out[bad].item(), hint=hint))
        return out, ref_k, ref_v

    try:
        logits = decode_with_attention_step(step, model, tokens)
    except _Divergence as divergence:
        return divergence.result
    expected = full_logits(model, tokens)
    bad = first_bad_index(logits, expected, atol=ABS_TOLERANCE)
    if bad is not None:  # pragma: no cover - every step matched, so only a broken driver gets here
        return CheckResult(name, False, "cached logits differ from the full pass", where=f"logits{list(bad)}",
                           rule="cached decode equals the full pass", got=logits[bad].item(),
                           expected=expected[bad].item(), hint="report this: the checker's driver is wrong")
    return CheckResult(name, True, f"all {tokens.size} decode steps × {model.config.n_layers} layers match; "
                                   f"your cached logits [{tokens.size}, {model.config.vocab_size}] equal "
                                   "the full pass within 1e-12")


# --- 05: checks that catch cache faults ----------------------------------------------------

def _fault_runs():
    from labkit.labs.cache_faults import MODES, run_case

    return {mode: run_case(mode) for mode in MODES}


def _boolean(value, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise CandidateProblem(f"{what} must return True or False, got {type(value).__name__}")
    return bool(value)


@exercise(
    "distinct_layer_keys",
    page="notebooks/11-labs/05-cache-faults.md",
    signature=("cache",),
    task="given a KVCache of the two-layer lab decoder, return True when layer 0's and layer 1's "
         "cached keys differ (beyond float rounding), False when one layer holds the other's keys",
)
def distinct_layer_keys(candidate) -> CheckResult:
    from labkit.nn import KVCache

    name = "distinct_layer_keys"
    runs = _fault_runs()
    cases: dict[str, tuple[KVCache, bool]] = {
        f"decoder {mode} after 7 steps": (run.cache, run.distinct_layer_keys_passed) for mode, run in runs.items()
    }
    near = runs["correct"].cache.copy()
    near.keys[1] = near.keys[0] + 1e-13
    cases["layer 1 = layer 0 + 1e-13 (rounding noise)"] = (near, False)
    for case, (cache, expected) in cases.items():
        got = _boolean(call(candidate, cache.copy()), "distinct_layer_keys")
        if got == expected:
            continue
        if expected:
            hint = ("every layer has its own W_k, so in a healthy cache the layers' keys differ in value — "
                    "even though their shapes are identical")
        elif "rounding" in case:
            hint = "two arrays that differ only by rounding noise hold the same keys: compare within a float tolerance"
        else:
            hint = ("a copied cache is a different array object holding the same numbers; compare the numbers, "
                    "not the objects or their shapes")
        return CheckResult(name, False, "a cache was judged wrongly", where=f"case “{case}”",
                           rule="True exactly when layer 0's and layer 1's cached keys are not equal within tolerance",
                           got=got, expected=expected, hint=hint)
    return CheckResult(name, True, f"all {len(cases)} caches judged correctly; only the copied cache is flagged")


@exercise(
    "cached_path_agrees",
    page="notebooks/11-labs/05-cache-faults.md",
    signature=("model", "tokens"),
    task="given a Decoder and tokens [T], return True when decoding the tokens one step at a time "
         "from an empty KVCache gives the same logits as one full pass (atol = rtol = 1e-12)",
)
def cached_path_agrees(candidate) -> CheckResult:
    from labkit.labs.cache_faults import MODES
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    name = "cached_path_agrees"
    cases = [(f"decoder {mode}, the lab's tokens", fault, lab_tokens(), fault is None)
             for mode, fault in MODES.items()]
    cases.append(("decoder correct, tokens [16, 0, 7, 7]", None, np.array([16, 0, 7, 7]), True))
    for case, fault, tokens, expected in cases:
        got = _boolean(call(candidate, lab_decoder(fault), tokens.copy()), "cached_path_agrees")
        if got == expected:
            continue
        if expected:
            hint = ("the two paths add the same numbers in a different order, so float64 leaves differences of "
                    "about 1e-16; agreement means within 1e-12, not bit for bit")
        else:
            hint = ("the faults act only on incremental decode steps and keep every shape right, and position 0 "
                    "is never affected: feed the tokens one decode step at a time from an empty cache and "
                    "compare every position's logits with the full pass")
        return CheckResult(name, False, "a decoder was judged wrongly", where=f"case “{case}”",
                           rule="True exactly when cached and full-pass logits agree within 1e-12",
                           got=got, expected=expected, hint=hint)
    return CheckResult(name, True, f"all {len(cases)} decoders judged correctly: the three faults are caught "
                                   "and the correct cache passes")
