"""The book's tables made from the rows lower layers return.

The labs and the cross-trace layer compute rows; this module is where they become a
``labkit.reader.Table`` for a page.
"""

from __future__ import annotations

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


def versus_source(rows, title: str | None = None, reference: str = "source's script, run") -> Table:
    """A "source / labkit computes" table for a notebook, under the book's number policy.

    rows: (quantity, reference value, computed value, tolerance) tuples; the reference is typed
    from the chapter, the computed value comes from a lab's ``run()``.  Integers, booleans,
    strings and their lists must be equal ("exact"); floats must ``agree`` — the verdict never
    depends on the last bits.  Chapter 11 prints code, not results, so by default the reference
    column is headed "source's script, run": what the chapter's script computed when it was run
    once, on one machine.  A discrepancy measure (a float reference at most ``tolerance`` > 0,
    e.g. max |cached − full|) shows the reference as the script prints it (``4.441e-16``) and the
    computed value against its tolerance (``≤ 1e-12 ✓``); every other float, ``fmt``."""
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
    return Table(out, ["quantity", reference, "labkit computes", "agree"], title)


def state_table() -> Table:
    """The §7.16 comparison of the three traces, generated from their contracts."""
    headers, rows = state_rows()
    return Table(rows, headers, title="Three traces, three contracts (§7.16)")
