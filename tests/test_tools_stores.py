"""The SQLite stores of trace three name their file and their trouble (``labkit.tools.store``).

Each case drives a real SQLite condition — a read-only connection, a file of the other store, a
foreign SQLite file, a lock held by another connection, a full disk (``PRAGMA max_page_count``),
columns from another version under the same ``user_version`` — and asserts the store's own error
type and that its message names the file; a full disk inside a transaction must surface as
itself, never as "cannot rollback".
"""

import sqlite3

import pytest

from harness.workload import CLOCK, make_invocation
from labkit.tools.calendar_service import CalendarService, CalendarStoreError, CreateRequest
from labkit.tools.confirm import request_digest
from labkit.tools.journal import SCHEMA, Journal, JournalError
from labkit.tools.store import StoreError


def _request(key="k1", minute=0):
    invocation = make_invocation("inv_s", minute)
    args = invocation.normalized_arguments
    return CreateRequest(key, request_digest(args), "user-42/primary", invocation.tool, args)


def _journal_with_one(path):
    journal = Journal(path)
    journal.open_invocation(make_invocation("inv_s").to_json(), "VALIDATED", 3)
    return journal


def test_each_store_kind_writes_its_own_application_id(tmp_path):
    Journal(tmp_path / "j.sqlite").close()
    CalendarService(CLOCK, path=str(tmp_path / "c.sqlite")).db.close()
    ids = [
        sqlite3.connect(tmp_path / f"{name}.sqlite").execute("PRAGMA application_id").fetchone()[0]
        for name in ("j", "c")
    ]
    assert ids == [0x4C4B4A31, 0x4C4B4331]
    assert issubclass(JournalError, StoreError) and issubclass(CalendarStoreError, StoreError)


@pytest.mark.parametrize("opened, other", [("journal", "calendar"), ("calendar", "journal")])
def test_swapped_files_are_refused_at_open(tmp_path, opened, other):
    path = tmp_path / "store.sqlite"
    (Journal(path).db if other == "journal" else CalendarService(CLOCK, path=str(path)).db).close()
    error = JournalError if opened == "journal" else CalendarStoreError
    with pytest.raises(error, match="files swapped") as caught:
        Journal(path) if opened == "journal" else CalendarService(CLOCK, path=str(path))
    assert str(path) in str(caught.value)


def test_a_foreign_sqlite_file_is_refused_at_open(tmp_path):
    path = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="not a labkit store") as caught:
        Journal(path)
    assert str(path) in str(caught.value)
    with pytest.raises(CalendarStoreError, match=str(path)):
        CalendarService(CLOCK, path=str(path))


def test_other_columns_under_the_same_user_version_are_refused_at_open(tmp_path):
    path = tmp_path / "journal.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA.replace("retry_budget    INTEGER NOT NULL,", "budget INTEGER NOT NULL,"))
    db.executescript("PRAGMA user_version = 1; PRAGMA application_id = 1280002609;")
    db.close()
    with pytest.raises(JournalError, match="other columns") as caught:
        Journal(path)
    assert str(path) in str(caught.value)


def test_a_column_gone_mid_run_is_the_journals_error(tmp_path):
    path = tmp_path / "journal.sqlite"
    journal = _journal_with_one(path)
    other = sqlite3.connect(path)
    other.execute("ALTER TABLE invocations DROP COLUMN request_digest")
    other.commit()
    other.close()
    with pytest.raises(JournalError, match="other tables than this version") as caught:
        journal.update("inv_s", request_digest="sha256:00")
    assert str(path) in str(caught.value)


def test_a_read_only_store_is_named_with_what_to_do(tmp_path):
    path = tmp_path / "calendar.sqlite"
    service = CalendarService(CLOCK, path=str(path))
    service.db.db.execute("PRAGMA query_only = ON")  # the connection cannot write, as on a read-only file
    with pytest.raises(CalendarStoreError, match="is read-only") as caught:
        service.create_event(_request())
    assert str(path) in str(caught.value) and "rollback" not in str(caught.value)


def test_a_store_locked_mid_run_is_named(tmp_path):
    path = tmp_path / "journal.sqlite"
    journal = Journal(path, timeout=0.1)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(JournalError, match=r"is locked by another process \(waited 0.1 s\)") as caught:
            journal.open_invocation(make_invocation("inv_s").to_json(), "VALIDATED", 3)
        assert str(path) in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not journal.db.in_transaction, "the failed BEGIN left no transaction behind"


@pytest.mark.parametrize("store", ["journal", "calendar"])
def test_a_full_disk_is_named_never_masked_by_the_rollback(tmp_path, store):
    path = tmp_path / f"{store}.sqlite"
    if store == "journal":
        target = _journal_with_one(path)
        pages = target.db.execute("PRAGMA page_count").fetchone()[0]
        target.db.execute(f"PRAGMA max_page_count = {pages}")

        def grow(i):
            target.record("inv_s", "VALIDATED", "VALIDATED", None, {"pad": "x" * 3000 * (i + 1)})

        error = JournalError
    else:
        target = CalendarService(CLOCK, path=str(path))
        pages = target.db.execute("PRAGMA page_count").fetchone()[0]
        target.db.execute(f"PRAGMA max_page_count = {pages + 1}")

        def grow(i):
            target.create_event(_request(f"k{i}" + "x" * 2000, minute=i % 60))

        error = CalendarStoreError
    with pytest.raises(error, match="the disk is full") as caught:
        for i in range(50):
            grow(i)
    assert str(path) in str(caught.value) and "cannot rollback" not in str(caught.value)
    assert not target.db.in_transaction


def test_the_rollback_runs_only_inside_an_open_transaction(tmp_path):
    journal = Journal(tmp_path / "journal.sqlite")
    with pytest.raises(ZeroDivisionError):  # the real error comes out, the transaction is gone
        with journal.db.transaction():
            journal.db.execute("COMMIT")  # something ended the transaction early
            raise ZeroDivisionError
    with pytest.raises(ZeroDivisionError):
        with journal.db.transaction():
            journal.db.execute("INSERT INTO transitions VALUES (1, 'x', 'A', 'B', NULL, '{}')")
            raise ZeroDivisionError
    assert journal.db.execute("SELECT count(*) FROM transitions").fetchone()[0] == 0, "rolled back"


def test_a_non_sqlite_file_is_refused_naming_it(tmp_path):
    path = tmp_path / "journal.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(JournalError, match="not an intact SQLite database") as caught:
        Journal(path)
    assert str(path) in str(caught.value)


def test_store_kinds_are_one_plain_table_and_a_kind_has_no_side_effect():
    from labkit.tools import store
    from labkit.tools.calendar_service import CALENDAR_STORE
    from labkit.tools.journal import JOURNAL

    table = dict(store.STORE_KINDS)
    assert table == {kind.application_id: kind.what for kind in (JOURNAL, CALENDAR_STORE)}
    with pytest.raises(ValueError, match="application_id 0x4c4b5831 must be its line of STORE_KINDS"):
        store.StoreKind("audit log", "", 1, 0x4C4B5831)
    with pytest.raises(ValueError, match="store kind 'ledger': application_id 0x4c4b4a31"):
        store.StoreKind("ledger", "", 1, JOURNAL.application_id)
    assert store.STORE_KINDS == table, "declaring a kind changed the table"


@pytest.mark.parametrize("number", ["0x4C4B4A31", float(0x4C4B4A31), True], ids=["str", "float", "bool"])
def test_a_store_kind_refuses_an_application_id_that_is_not_an_int(number):
    """A float equal to the journal's id would find its line of STORE_KINDS; only an int is an id."""
    from labkit.tools import store

    with pytest.raises(ValueError, match=r"store kind 'journal': application_id .* not an int\)"):
        store.StoreKind("journal", "", 1, number)
