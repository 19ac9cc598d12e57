"""Exercise of the comparing-traces page: name the fault behind a mystery trace."""

from __future__ import annotations

from labkit.check.core import CheckResult, call, exercise, failure, passed

#: the mysteries handed to the reader's function, in order: (kind, fault)
MYSTERIES = (
    ("text", "broken_detokenizer"),
    ("diffusion", "leading_timesteps"),
    ("tool", "unauthorized"),
    ("text", "reset_rope_position"),
)


def mystery(number: int = 0) -> tuple[str, list[dict], list[dict]]:
    """Mystery ``number``: (kind, golden trace, mystery trace) — the fault is not named."""
    from labkit.trace import catalogue

    kind, fault = MYSTERIES[number]
    return kind, catalogue.golden(kind), catalogue.run(kind, fault)


#: how a wrong answer is wrong → (message, rule, hint)
_WRONG_ANSWER = {
    "unknown": (
        "the answer is not a fault of the catalogue",
        "answer is a catalogue name",
        "return a key of labkit.trace.catalogue.faults(kind)",
    ),
    "misattributed": (
        "a mystery was attributed to the wrong fault",
        "fault name",
        "find the first divergence (event, rule and field), then read the "
        "descriptions of the faults that could change that field first; "
        "later differences are consequences, not causes",
    ),
}


@exercise(
    "name_the_fault",
    page="notebooks/07-traces/11-comparing-traces.md",
    signature=("kind", "golden", "mystery"),
    kind="diagnose",
    idea="compare the two traces event by event: the first divergence names the stage at fault",
)
def name_the_fault(candidate) -> CheckResult:
    """given a trace kind, its golden trace and a mystery trace, return the name of the catalogue
    fault (labkit.trace.catalogue.faults(kind)) that produced the mystery trace"""
    from labkit.trace import catalogue

    for number, (kind, fault) in enumerate(MYSTERIES):
        _, golden, trace = mystery(number)
        answer = call(candidate, kind, [dict(e) for e in golden], [dict(e) for e in trace])
        if answer != fault:
            known = catalogue.faults(kind)
            message, rule, hint = _WRONG_ANSWER["misattributed" if answer in known else "unknown"]
            return failure(
                message,
                where=f"mystery {number} ({kind})",
                rule=rule,
                got=answer,
                expected=fault if answer in known else f"one of {sorted(known)}",
                hint=hint,
            )
    return passed(f"all {len(MYSTERIES)} mysteries solved")
