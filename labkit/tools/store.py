"""Opening a durable SQLite store (the runtime's journal, the calendar's store) or refusing it.

``open_store(path, schema, version, what)`` returns an autocommit connection to ``path``.
A new (or empty) file gets ``schema`` and ``PRAGMA user_version = version``.  An existing
file is refused with ``StoreError`` (a ``ValueError`` naming the file and what was expected)
before anything reads or writes it when:

* it is not a SQLite database, or its pages are truncated or damaged (``PRAGMA quick_check``);
* another process holds it locked for longer than ``timeout`` seconds;
* it was written under another schema version (``PRAGMA user_version``).

A process killed in the middle of a transaction leaves a hot rollback journal next to the
file; SQLite rolls it back when the file is opened again, so that is not damage.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


class StoreError(ValueError):
    """A store file that cannot be trusted; the message names the file and the problem."""


def open_store(path: str | Path, schema: str, version: int, what: str, timeout: float = 5.0) -> sqlite3.Connection:
    """An autocommit connection to the checked (or newly created) store at ``path``."""
    path = str(path)
    if timeout < 0:
        raise ValueError(f"timeout must be >= 0 seconds, got {timeout}")
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=timeout)
    except sqlite3.Error as exc:
        raise StoreError(f"{what} {path} cannot be opened: {exc}") from None
    try:
        _check_or_create(db, path, schema, version, what)
    except sqlite3.OperationalError as exc:
        db.close()
        if "locked" in str(exc) or "busy" in str(exc):
            raise StoreError(
                f"{what} {path} is locked by another process (waited {timeout:g} s); "
                f"expected it free — is another runtime using it?"
            ) from None
        raise StoreError(f"{what} {path} cannot be read: {exc}") from None
    except sqlite3.DatabaseError as exc:
        db.close()
        raise StoreError(
            f"{what} {path} is not an intact SQLite database ({exc}); expected a file written by labkit"
        ) from None
    except BaseException:
        db.close()
        raise
    return db


def _check_or_create(db: sqlite3.Connection, path: str, schema: str, version: int, what: str) -> None:
    if path != ":memory:":
        problems = [row[0] for row in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise StoreError(
                f"{what} {path} is damaged (truncated or corrupt): {'; '.join(problems[:3])}; "
                f"expected an intact SQLite file"
            )
    tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if tables == 0:
        db.executescript(f"BEGIN IMMEDIATE; {schema}; PRAGMA user_version = {int(version)}; COMMIT;")
        return
    found = db.execute("PRAGMA user_version").fetchone()[0]
    if found != version:
        raise StoreError(
            f"{what} {path} has schema version {found}, this labkit reads version {version}; "
            f"migrate it or start a fresh {what}"
        )
