"""The book's tables made from the rows the labs and the cross-trace layer return."""

import numpy as np

from labkit.core.guards import holds_float
from labkit.reader import Table
from labkit.reader.numbers import fmt, fmt_bound
from labkit.trace.kinds import state_rows

#: Relative tolerance for a float the chapter's script computed when it was run once: the
#: labs' own ``rtol`` (a different BLAS kernel moves a float64 result by a few ulps).
SCRIPT_RUN_RTOL = 1e-12


def agree(source, computed, tolerance: float) -> bool:
    """Every number of ``computed`` within ``tolerance`` (absolute) plus ``SCRIPT_RUN_RTOL``
    relative of ``source`` (equal infinities agree), the shapes equal."""
    try:
        ref, got = np.asarray(source, dtype=float), np.asarray(computed, dtype=float)
        return ref.shape == got.shape and bool(np.allclose(got, ref, rtol=SCRIPT_RUN_RTOL, atol=tolerance))
    except (TypeError, ValueError):
        return False


def versus_source(rows, title: str | None = None) -> Table:
    """A "source / labkit computes" table: ``rows`` of (quantity, the source's value, a lab's value,
    tolerance).  Integers, booleans, strings and their lists must be equal ("exact"); floats must
    ``agree``.  Chapter 11 prints code, not results: the reference is what the chapter's script computed
    when it was run once ("source's script, run").  A discrepancy measure (a float reference at most
    ``tolerance`` > 0, e.g. max |cached − full|) shows the reference as the script prints it
    (``4.441e-16``) and the computed value against its tolerance (``≤ 1e-12 ✓``)."""
    out = []
    for quantity, source, computed, tolerance in rows:
        if not holds_float(source) and not holds_float(computed):
            out.append([quantity, str(source), str(computed), "exact" if source == computed else "DIFFERENT"])
            continue
        verdict = f"within {tolerance:g}" if tolerance > 0 else f"within {SCRIPT_RUN_RTOL:g} rel."
        verdict = verdict if agree(source, computed, tolerance) else "DIFFERENT"
        if isinstance(source, float) and tolerance > 0 and abs(source) <= tolerance and np.ndim(computed) == 0:
            out.append([quantity, f"{source:.3e}", fmt_bound(abs(float(computed)), tolerance), verdict])
        else:
            out.append([quantity, fmt(source), fmt(computed), verdict])
    return Table(out, ["quantity", "source's script, run", "labkit computes", "agree"], title)


def state_table() -> Table:
    """The §7.16 comparison of the three traces, generated from their contracts."""
    headers, rows = state_rows()
    return Table(rows, headers, title="Three traces, three contracts (§7.16)")
