"""A durable SQLite store (the runtime's journal, the calendar's store) that names its file and its trouble.

``Store(path, kind, timeout)`` opens an autocommit connection.  A new file gets the kind's schema,
``PRAGMA user_version`` and ``PRAGMA application_id`` (one per kind, so a journal is never taken for a
calendar store).  An existing file is refused with the kind's error (a ``StoreError``, a ``ValueError``)
before anything reads or writes it when it is not an intact SQLite database (``PRAGMA quick_check``),
belongs to another kind or program, or holds another schema version or other columns.  Afterwards every
``sqlite3`` error comes out as the kind's error naming the file and what to do (``TROUBLES``).
``transaction()`` rolls back only a transaction still open, so the real error is never masked by "cannot
rollback".  A hot rollback journal left by a killed process is rolled back by SQLite on the next open.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path


class StoreError(ValueError):
    """A store file that cannot be used; the message names the file, the problem and what to do."""


#: application_id → the kind's name, filled as kinds are declared (for "this file is a …")
KNOWN_IDS: dict[int, str] = {}


@dataclass(frozen=True)
class StoreKind:
    what: str  # "journal", "calendar store"
    schema: str
    version: int  # PRAGMA user_version
    application_id: int  # PRAGMA application_id: which kind of store a file is
    error: type[StoreError] = StoreError

    def __post_init__(self):
        KNOWN_IDS[self.application_id] = self.what


#: what an sqlite3 message means, and what to do about it
TROUBLES = (
    (("readonly", "read-only"), "is read-only; make it writable (or copy it somewhere writable) and restart"),
    (("disk is full", "database or disk is full"), "cannot grow: the disk is full; free some space and restart"),
    (("locked", "busy"), "is locked by another process{waited}; is another runtime using it? stop it, or retry later"),
    (
        ("no such column", "no such table", "has no column", "columns but"),
        "has other tables than this version's; it was written by another labkit — start a fresh one",
    ),
)


class Store:
    """An autocommit connection to one checked store file; sqlite3 errors become ``kind.error``."""

    def __init__(self, path: str | Path, kind: StoreKind, timeout: float = 5.0):
        if timeout < 0:
            raise ValueError(f"timeout must be >= 0 seconds, got {timeout}")
        self.path, self.kind, self.timeout = str(path), kind, timeout
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=timeout)
        except sqlite3.Error as exc:
            raise self.trouble(exc, "cannot be opened") from exc
        try:
            self._check_or_create()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            if type(exc) is not sqlite3.DatabaseError:  # OperationalError & co: locked, read-only, …
                raise self.trouble(exc, "cannot be read") from exc
            raise kind.error(
                f"{kind.what} {self.path} is not an intact SQLite database ({exc}); expected a file written by labkit"
            ) from exc
        except BaseException:
            self.db.close()
            raise

    def trouble(self, exc: sqlite3.Error, doing: str = "failed") -> StoreError:
        """The kind's error for ``exc``: the file, what went wrong and what to do."""
        message = str(exc)
        for needles, advice in TROUBLES:
            if any(n in message for n in needles):
                advice = advice.format(waited=f" (waited {self.timeout:g} s)")
                return self.kind.error(f"{self.kind.what} {self.path} {advice} [sqlite3: {message}]")
        return self.kind.error(f"{self.kind.what} {self.path} {doing}: {message}")

    def execute(self, sql: str, params=()) -> sqlite3.Cursor:
        try:
            return self.db.execute(sql, params)
        except sqlite3.Error as exc:
            raise self.trouble(exc) from exc

    def __getattr__(self, name: str):
        """The connection's own ``in_transaction``, ``set_trace_callback``, ``close`` …"""
        if name == "db":  # not connected
            raise AttributeError(name)
        return getattr(self.db, name)

    @contextmanager
    def transaction(self):
        """BEGIN … COMMIT, all or nothing; inside an open transaction it joins that one."""
        if self.db.in_transaction:
            yield self
            return
        self.execute("BEGIN IMMEDIATE")
        try:
            yield self
            self.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back already (a full disk does)
                self.db.execute("ROLLBACK")
            raise

    def _check_or_create(self) -> None:
        kind, db = self.kind, self.db
        if self.path != ":memory:":
            problems = [row[0] for row in db.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise kind.error(
                    f"{kind.what} {self.path} is damaged (truncated or corrupt): {'; '.join(problems[:3])}; "
                    f"expected an intact SQLite file"
                )
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            db.executescript(
                f"BEGIN IMMEDIATE; {kind.schema}; PRAGMA user_version = {int(kind.version)}; "
                f"PRAGMA application_id = {int(kind.application_id)}; COMMIT;"
            )
            return
        found = db.execute("PRAGMA application_id").fetchone()[0]
        if found != kind.application_id:
            other = KNOWN_IDS.get(found)
            what = f"a {other}, not a {kind.what} — are the files swapped?" if other else "not a labkit store"
            raise kind.error(f"{kind.what} {self.path} is {what} (application_id {found}); expected a {kind.what}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != kind.version:
            raise kind.error(
                f"{kind.what} {self.path} has schema version {version}, this labkit reads version {kind.version}; "
                f"migrate it or start a fresh {kind.what}"
            )
        if _columns(db) != _expected_columns(kind.schema):
            raise kind.error(
                f"{kind.what} {self.path} has other columns than version {kind.version}'s under the same "
                f"user_version; it was written by another labkit — start a fresh {kind.what}"
            )


def _columns(db: sqlite3.Connection) -> dict[str, list[str]]:
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')] for t in tables if not t.startswith("sqlite_")}


def _expected_columns(schema: str) -> dict[str, list[str]]:
    with closing(sqlite3.connect(":memory:")) as scratch:
        scratch.executescript(schema)
        return _columns(scratch)
