"""The book's tables made from the rows lower layers return.

The labs and the cross-trace layer compute rows; this module is where they become a
``labkit.reader.Table`` for a page.
"""

from __future__ import annotations

from labkit.labs.common import agreement_rows
from labkit.reader import Table
from labkit.trace.contracts import state_rows


def versus_source(rows, title: str | None = None) -> Table:
    """A "source says / labkit computes" table: (quantity, source value, computed value,
    tolerance) tuples in, one row each with its verdict ("exact", "within TOL", "DIFFERENT")."""
    return Table(agreement_rows(rows), ["quantity", "source says", "labkit computes", "agree"], title)


def state_table() -> Table:
    """The §7.16 comparison of the three traces, generated from their contracts."""
    headers, rows = state_rows()
    return Table(rows, headers, title="Three traces, three contracts (§7.16)")
