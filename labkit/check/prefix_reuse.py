"""Exercise of page 09 (§7.13): how much of the first call's cache the second call reuses."""

from __future__ import annotations

import numpy as np

from labkit.check import _tools as tools
from labkit.check._support import Recorder, compare_traces
from labkit.check.core import CandidateProblem, CheckResult, call, exercise, failure, passed
from labkit.core.guards import is_integer

PAGE = "notebooks/07-traces/09-tool-second-call.md"


OTHER_USER_TEXT = "明天上午九点提醒我带护照。"


class _Reuse(Recorder):
    """The reader's count as the runtime's prefix reuse; ``calls`` keeps its answers."""

    def __call__(self, cached_ids, new_ids) -> int:
        got = call(self.candidate, cached_ids, new_ids)
        if not is_integer(got):
            raise CandidateProblem(
                f"reusable_prefix must return an int (a number of positions), got {type(got).__name__} {got!r}"
            )
        limit = min(len(cached_ids), len(new_ids) - 1)
        if not 0 <= int(got) <= limit:
            raise CandidateProblem(
                f"reusable_prefix returned {int(got)}, but only 0…{limit} positions exist "
                f"in both inputs (the cached input has {len(cached_ids)} tokens)"
            )
        self.calls.append(int(got))
        return int(got)


def _reuse_hint(got: int, expected: int, case: str, gap: float | None = None) -> str:
    if got < expected:
        return (
            f"your function answered {got}, but positions 0…{expected - 1} hold the same tokens "
            "in both inputs, so their keys and values are "
            "identical and may all be reused; reuse stops only at the first position whose token differs"
        )
    return (
        f"position {expected} holds another token in the new input than in the cached one, so the cached "
        f"keys and values from position {expected} on belong to other tokens"
        + (f" — reusing them changes the logits (max |Δ| = {gap:.3g} vs a prefill from scratch)" if gap else "")
        + "; count only the leading positions where the two inputs agree"
    )


@exercise("reusable_prefix", page=PAGE, signature=("cached_ids", "new_ids"))
def check_reusable_prefix(candidate) -> CheckResult:
    """return how many leading positions of new_ids [T_b] may reuse the K/V cached for cached_ids
    [T_a]: the length of their common prefix"""
    from labkit.tools.calls import common_prefix, prefill_with_reuse
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.template import ToolTemplate
    from labkit.tools.tokenizer import ToolTokenizer
    from labkit.tools.toolspec import load_toolspec

    # 1. the chapter's second call, inside the real runtime, against the golden trace
    reader = _Reuse(candidate)
    mine = tools.run("happy", ToolHooks(reusable_prefix=reader))
    failed = compare_traces(
        "the chapter's second call vs the golden trace",
        tools.golden("happy"),
        mine.events,
        lambda div: _reuse_hint(reader.calls[0] if reader.calls else -1, 86, "happy"),
    )
    if failed is not None:
        return failed
    # 2. the cache holds another request's prompt: only the shared beginning may be reused
    decoder, spec, tok = tools.decoder(), load_toolspec(), ToolTokenizer()
    cached_ids = np.array([tok.encode(ToolTemplate().tool_call_prompt([spec], OTHER_USER_TEXT))])
    new_ids = mine.second_call.input_ids
    _, cache = decoder.prefill(cached_ids)
    reader = _Reuse(candidate)
    reused, prefill, _ = prefill_with_reuse(decoder, cached_ids, cache, new_ids, reader)
    expected = common_prefix(cached_ids, new_ids)
    scratch = decoder.full_logits(new_ids)[0, -1]
    gap = float(np.max(np.abs(np.asarray(prefill.next_logits[0], dtype=np.float64) - scratch)))
    case = f"a cache built for the request {OTHER_USER_TEXT!r} ({cached_ids.shape[1]} tokens)"
    if reused != expected:
        return failure(
            "the reused prefix is not the common prefix",
            where=f"{case}: reused_prefix_tokens",
            rule="reuse exactly the identical prefix",
            got=reused,
            expected=expected,
            hint=_reuse_hint(reused, expected, case, gap if gap > 1e-4 else None),
        )
    if gap > 1e-4:  # pragma: no cover - the right count always reproduces the logits
        return failure("reused logits differ from a prefill from scratch", where=case, got=gap, expected="< 1e-4")
    return passed(
        f"the second call reuses 86 and prefills 46 positions as in the golden trace; "
        f"a cache of another request is reused for its {expected} shared positions "
        "and the logits equal a prefill from scratch"
    )
