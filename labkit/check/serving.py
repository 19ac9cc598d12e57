"""The exercise of page 07-13 (one request among many): a prediction the page's next cell answers."""

from labkit.check.core import value
from labkit.serving.trace_one import run_batch


@value
def first_preemption_at_capacity_8() -> list:
    """[request ID, step] of the first preemption when the pool holds 8 blocks."""
    first = next(row for row in run_batch(8).cost_rows() if row["preempted"])
    return [first["preempted"][0], first["step"]]
