"""A durable SQLite store (the runtime's journal, the calendar's store) that trusts nothing it cannot verify.

``Store(path, kind)`` gives a new file the kind's schema, ``user_version`` and ``application_id``.  An
existing file is refused by name, before anything reads it, when it is empty, damaged (``integrity_check``:
every page and index, which ``quick_check`` skips; a whole number of pages), of another kind, version or
schema (an extra trigger could book twice), or against the kind's own rules (``StoreKind.check``): so half
a commit left by a lost ``-journal`` is refused.  Later ``sqlite3`` errors become the kind's error.
"""

import re
import sqlite3
from collections.abc import Callable
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from labkit.core import strictjson


class StoreError(ValueError):
    """A store file that cannot be used; the message names the file, the problem and what to do."""


#: application_id → the store kind that writes it, one line per kind (for "this file is a …, not a …");
#: a ``StoreKind`` whose line this is not is refused
STORE_KINDS: dict[int, str] = {
    0x4C4B4A31: "journal",  # "LKJ1": labkit.tools.journal.JOURNAL
    0x4C4B4331: "calendar store",  # "LKC1": labkit.tools.calendar_service.CALENDAR_STORE
}


@dataclass(frozen=True)
class StoreKind:
    what: str  # "journal", "calendar store"
    schema: str
    version: int  # PRAGMA user_version
    application_id: int  # PRAGMA application_id: which kind of store a file is
    error: type[StoreError] = StoreError
    #: the kind's own consistency rules, run on an existing file at open: (connection, path) → problems
    check: Callable[[sqlite3.Connection, str], list[str]] | None = None

    def __post_init__(self):
        number = self.application_id
        # 0 is SQLite's "none"; one id per kind, so a journal is never taken for a calendar store
        if not isinstance(number, int) or isinstance(number, bool) or STORE_KINDS.get(number) != self.what:
            shown = f"{number:#x}" if type(number) is int else f"{number!r} ({type(number).__name__}, not an int)"
            raise ValueError(
                f"store kind {self.what!r}: application_id {shown} must be its line of STORE_KINDS, "
                f"which has {STORE_KINDS.get(number)!r} there"
            )


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


#: what to do with a store that cannot be trusted
RESTORE = "restore it together with its -journal file from where it came, or move it aside to start a fresh one"
SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
#: the runtime's keys (``<request_id>:create-event:<attempt>``); a service takes any printable key
IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9_.-]{1,200}:create-event:[1-9][0-9]{0,5}")
SERVICE_KEY = re.compile(r"[!-~]{1,255}")


def problem_with(value, expected: str, ok: bool) -> list[str]:
    """[] when ``ok``, else the one problem "<expected>, got <value>" (for the kinds' checks)."""
    return [] if ok else [f"{expected}, got {value!r}"[:200]]


def json_object(text, where: str) -> tuple[dict | None, list[str]]:
    """(the parsed object, []) or (None, [the problem]): JSON text read by the strict reader, and an object."""
    if not isinstance(text, str):
        return None, [f"{where} must be JSON text, got {type(text).__name__}"]
    try:
        value = strictjson.loads(text, where)
    except ValueError as exc:
        return None, [str(exc)[:200]]
    return (value, []) if isinstance(value, dict) else (None, [f"{where} must be a JSON object, got {text[:40]!r}"])


class Store:
    """An autocommit connection to one checked store file; sqlite3 errors become ``kind.error``."""

    def __init__(self, path: str | Path, kind: StoreKind, timeout: float = 5.0, *, create: bool = True):
        if timeout < 0:
            raise ValueError(f"timeout must be >= 0 seconds, got {timeout}")
        self.path, self.kind, self.timeout = str(path), kind, timeout
        target = self.path if self.path == ":memory:" else self._existing_file(create)
        try:
            self.db = sqlite3.connect(target, isolation_level=None, timeout=timeout, uri=target.startswith("file:"))
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

    def _existing_file(self, create: bool) -> str:
        """The file's URI for sqlite3 (``mode=rw``: SQLite must never create a store that should exist)."""
        file, kind = Path(self.path), self.kind
        if not file.exists() and not file.is_symlink():
            if create:
                return self.path
            raise kind.error(
                f"{kind.what} {self.path} does not exist; a restart needs the {kind.what} the run wrote — "
                f"restore it (with its -journal file, if any), or start the run afresh"
            )
        if not file.is_file():
            raise kind.error(f"{kind.what} {self.path} is not a regular file; expected a SQLite file written by labkit")
        if file.stat().st_size == 0:
            raise kind.error(
                f"{kind.what} {self.path} is empty (0 bytes), which a store labkit wrote never is: the file was "
                f"truncated or replaced; {RESTORE}"
            )
        return file.resolve().as_uri() + "?mode=rw"

    def refuse(self, what: str, problems: list[str]) -> StoreError:
        """The kind's error for a store that cannot be trusted: the file, the first problems, what to do."""
        shown = "; ".join(problems[:3]) + (f"; … ({len(problems)} problems)" if len(problems) > 3 else "")
        return self.kind.error(f"{self.kind.what} {self.path} {what}: {shown}; {RESTORE}")

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
        """BEGIN … COMMIT, all or nothing; inside an open transaction it joins that one.

        On an error it rolls back only a transaction still open (SQLite may have ended it already), so the
        real error is never hidden by "cannot rollback - no transaction is active".
        """
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
            self._check_intact()
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            db.executescript(
                f"BEGIN IMMEDIATE; {kind.schema}; PRAGMA user_version = {int(kind.version)}; "
                f"PRAGMA application_id = {int(kind.application_id)}; COMMIT;"
            )
            return
        found = db.execute("PRAGMA application_id").fetchone()[0]
        if found != kind.application_id:
            other = STORE_KINDS.get(found)
            what = f"a {other}, not a {kind.what} — are the files swapped?" if other else "not a labkit store"
            raise kind.error(f"{kind.what} {self.path} is {what} (application_id {found}); expected a {kind.what}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != kind.version:
            raise kind.error(
                f"{kind.what} {self.path} has schema version {version}, this labkit reads version {kind.version}; "
                f"migrate it or start a fresh {kind.what}"
            )
        differences = schema_differences(_master(db), _expected_master(kind.schema))
        if differences:
            raise kind.error(
                f"{kind.what} {self.path} has another schema than version {kind.version}'s under the same "
                f"user_version ({'; '.join(differences[:3])}); it was written by another labkit or changed by "
                f"hand — start a fresh {kind.what}"
            )
        problems = kind.check(db, self.path) if kind.check else []
        if problems:
            raise self.refuse("contradicts itself (half a commit, or an edit by hand)", problems)

    def _check_intact(self) -> None:
        """``integrity_check`` (every page and every index entry) and a whole number of pages."""
        problems = [row[0] for row in self.db.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            raise self.refuse("is damaged (truncated or corrupt; integrity_check)", problems)
        pages, size = (self.db.execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_count", "page_size"))
        on_disk = Path(self.path).stat().st_size
        if pages and on_disk != pages * size:
            raise self.refuse("is damaged", [f"{on_disk} bytes on disk for {pages} pages of {size} bytes"])


def _master(db: sqlite3.Connection) -> dict[tuple[str, str], str | None]:
    """``sqlite_master`` as (type, name) → SQL."""
    return {(kind, name): sql for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master")}


@lru_cache(maxsize=8)
def _expected_master(schema: str) -> dict[tuple[str, str], str | None]:
    with closing(sqlite3.connect(":memory:")) as scratch:
        scratch.executescript(schema)
        return _master(scratch)


def schema_differences(found: dict, expected: dict) -> list[str]:
    """What differs between a file's ``sqlite_master`` and the kind's, one line per object."""
    lines = [f"an extra {t} {n!r}" for t, n in sorted(set(found) - set(expected))]
    lines += [f"no {t} {n!r}" for t, n in sorted(set(expected) - set(found))]
    changed = sorted(key for key, sql in found.items() if expected.get(key, sql) != sql)
    return lines + [f"{t} {n!r} has other {'columns or SQL' if t == 'table' else 'SQL'}" for t, n in changed]
