"""Half a commit: a kill at any page write of a commit, and then its ``-journal`` lost.

SQLite (rollback-journal mode, the stores' default) commits in three steps: it copies each page it will
change into ``<file>-journal`` and syncs it, writes the changed pages into the file, then deletes the
``-journal``.  A kill in the second step leaves some of the commit's pages written; the next open finds
the hot ``-journal`` and rolls them back.  Lose that ``-journal`` too (deleted, or the store copied
without it) and nothing rolls back: the file holds whichever of the commit's pages were written.

No VFS is needed to reach every such file.  ``commits`` runs the execute path in-process with a trace
callback on both stores' connections; SQLite calls it before each statement, when the files hold every
commit made so far and nothing of the open one (rollback mode writes a file only at COMMIT, and these
transactions are far too small to spill their page cache).  Consecutive snapshots that differ are one
commit each.  ``torn`` yields, for every commit, the file after each subset of its changed pages was
written — every subset when there are at most ``ALL_SUBSETS_UP_TO`` (so any write order SQLite may use is
covered), else each prefix and each single page in page order — with the file's growth as pages too.
``restart`` then opens the stores as a restart does (``open_stores``: a ``StoreError`` is a refusal) and
recovers every invocation; ``outcome`` counts the events per invocation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.workload import JOURNAL_FILE, SERVICE_FILE, executor_for, open_stores, run_invocations
from labkit.tools.calendar_service import ServiceTransport
from labkit.tools.recovery import recover_invocation, verify_approvals
from labkit.tools.store import StoreError

ALL_SUBSETS_UP_TO = 8
FILES = (JOURNAL_FILE, SERVICE_FILE)


@dataclass(frozen=True)
class Commit:
    number: int
    file: str  # JOURNAL_FILE or SERVICE_FILE
    sql: str  # the statement that ended it (COMMIT, or an autocommit statement)
    before: dict[str, bytes]  # both files before it
    after: bytes  # ``file`` after it


def _snapshot(where: Path) -> dict[str, bytes]:
    return {name: (where / name).read_bytes() for name in FILES}


def commits(where: Path, runtime: str = "journal_first") -> list[Commit]:
    """Execute the journal's approved invocations in ``where`` (prepared stores) and return every commit."""
    journal, service = open_stores(where, JOURNAL_FILE, "idempotent", 5.0)
    seen, statements = [_snapshot(where)], []

    def look(sql: str) -> None:
        seen.append(_snapshot(where))
        statements.append(" ".join(sql.split())[:60])

    for store in (journal, service):
        store.db.set_trace_callback(look)
    try:
        run_invocations(journal, ServiceTransport(service), "execute", runtime)
    finally:
        journal.close(), service.db.close()
    seen.append(_snapshot(where))
    statements.append("(the end)")
    found = []
    for before, after, sql in zip(seen, seen[1:], ["(open)", *statements], strict=False):
        changed = [name for name in FILES if before[name] != after[name]]
        if len(changed) > 1:
            raise RuntimeError(f"one step changed {changed}; a commit writes one store")
        if changed:
            found.append(Commit(len(found), changed[0], sql, before, after[changed[0]]))
    return found


def pages(before: bytes, after: bytes, size: int) -> list[int]:
    """The page numbers (0-based) a commit wrote: those that differ, and those it added."""
    count = max(len(before), len(after)) // size
    return [p for p in range(count) if before[p * size : (p + 1) * size] != after[p * size : (p + 1) * size]]


def subsets(changed: list[int]) -> Iterator[tuple[int, ...]]:
    """Which of the changed pages a kill may have let through (the commit's own complete write excluded)."""
    if len(changed) <= ALL_SUBSETS_UP_TO:
        for n in range(len(changed)):
            yield from itertools.combinations(changed, n)
        return
    yield from (tuple(changed[:n]) for n in range(len(changed)))
    yield from ((p,) for p in changed[1:])


def torn(commit: Commit) -> Iterator[tuple[tuple[int, ...], bytes]]:
    """(pages written, the file a kill after writing them leaves) for every subset of the commit's pages."""
    before, after = commit.before[commit.file], commit.after
    size = int.from_bytes(after[16:18], "big") or 65536  # the page size in the file header
    for written in subsets(pages(before, after, size)):
        image = bytearray(before)
        for p in written:
            end = (p + 1) * size
            image.extend(bytes(max(0, end - len(image))))  # a write past the end grows the file
            image[p * size : end] = after[p * size : end]
        yield written, bytes(image)


def restart(where: Path, files: dict[str, bytes]) -> str | dict[str, list[str]]:
    """Write ``files`` into ``where`` (no ``-journal``), restart, recover every invocation: the refusal's
    message, or each invocation's journaled state and its events after the recovery."""
    for name, data in files.items():
        (where / name).write_bytes(data)
        Path(f"{where / name}-journal").unlink(missing_ok=True)
    try:
        journal, service = open_stores(where, JOURNAL_FILE, "idempotent", 1.0)
    except StoreError as exc:
        return str(exc)
    try:
        verify_approvals(journal)
        for entry in journal.entries():
            executor = executor_for(ServiceTransport(service), entry.invocation_id, entry.retry_budget, "journal_first")
            recover_invocation(journal, executor, entry.invocation_id)
        by_key = {}
        for event_id, record in service.store.items():
            by_key.setdefault(record["idempotency_key"].split(":")[0], []).append(event_id)
        return {e.invocation_id: [e.state, *by_key.get(f"req-{e.invocation_id}", [])] for e in journal.entries()}
    except StoreError as exc:
        return str(exc)
    finally:
        journal.close(), service.db.close()
