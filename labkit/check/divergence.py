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


@exercise("name_the_fault", page="notebooks/07-traces/11-comparing-traces.md", signature=("kind", "golden", "mystery"))
def name_the_fault(candidate) -> CheckResult:
    """given a trace kind, its golden trace and a mystery trace, return the name of the catalogue
    fault (labkit.trace.catalogue.faults(kind)) that produced the mystery trace"""
    from labkit.trace import catalogue

    for number, (kind, fault) in enumerate(MYSTERIES):
        _, golden, trace = mystery(number)
        answer = call(candidate, kind, [dict(e) for e in golden], [dict(e) for e in trace])
        if answer not in catalogue.faults(kind):
            return failure(
                "the answer is not a fault of the catalogue",
                where=f"mystery {number} ({kind})",
                rule="answer is a catalogue name",
                got=answer,
                expected=f"one of {sorted(catalogue.faults(kind))}",
                hint="return a key of labkit.trace.catalogue.faults(kind)",
            )
        if answer != fault:
            return failure(
                "a mystery was attributed to the wrong fault",
                where=f"mystery {number} ({kind})",
                rule="fault name",
                got=answer,
                expected=fault,
                hint="find the first divergence (event, rule and field), then read the "
                "descriptions of the faults that could change that field first; "
                "later differences are consequences, not causes",
            )
    return passed(f"all {len(MYSTERIES)} mysteries solved")
