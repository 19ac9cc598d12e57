"""Damaged, foreign and contradictory stores are refused by name before anything runs on them.

Each case builds a real store (one approved invocation executed to COMMITTED), damages it as a
disk, a copy or a hand would — missing, zero bytes, the last byte gone, an index that disagrees with its
table (``quick_check`` lets it through, ``integrity_check`` does not), an extra trigger, view or index, a
value no labkit writes, a flipped bit in a key, a calendar that does not hold the journal's commit — and
asserts the store's own error type naming the file.
"""

import shutil
import sqlite3
from pathlib import Path

import pytest

from harness.crashes import CrashSchedule, prepare
from harness.workload import (
    CLOCK,
    JOURNAL_FILE,
    SERVICE_FILE,
    make_invocation,
    open_stores,
    run_invocations,
)
from labkit.tools.calendar_service import CalendarService, CalendarStoreError, CreateRequest, ServiceTransport
from labkit.tools.confirm import request_digest
from labkit.tools.journal import Journal, JournalError
from labkit.tools.store import StoreError


@pytest.fixture(scope="module")
def once(tmp_path_factory):
    where = tmp_path_factory.mktemp("committed") / "run"
    prepare(CrashSchedule(0, 1, 0, 2, (), ((),), ((),)), where)
    journal, service = open_stores(where, JOURNAL_FILE, "idempotent", 5.0)
    run_invocations(journal, ServiceTransport(service), "execute", "journal_first")
    journal.close(), service.db.close()
    return where


@pytest.fixture
def committed(once, tmp_path):
    """A directory whose journal and calendar store hold one committed invocation (s0i0, evt_6K2)."""
    return Path(shutil.copytree(once, tmp_path / "run"))


def _sql(path, *statements):
    db = sqlite3.connect(path, isolation_level=None)
    for statement in statements:
        db.execute(statement)
    db.close()


def _refused(error, path, match, opener):
    with pytest.raises(error, match=match) as caught:
        opener()
    assert str(path) in str(caught.value), caught.value
    return str(caught.value)


OPEN = {
    JOURNAL_FILE: (JournalError, lambda p: Journal(p, create=False)),
    SERVICE_FILE: (CalendarStoreError, lambda p: CalendarService(CLOCK, path=str(p), create=False)),
}


@pytest.mark.parametrize("name", [JOURNAL_FILE, SERVICE_FILE])
def test_a_missing_or_empty_store_is_refused_never_taken_as_new(committed, name):
    path = committed / name
    error, opener = OPEN[name]
    path.write_bytes(b"")
    _refused(error, path, r"is empty \(0 bytes\)", lambda: opener(path))
    path.unlink()
    _refused(error, path, "does not exist", lambda: opener(path))
    assert not path.exists(), "a refused open must not create the file"
    path.mkdir()
    _refused(error, path, "not a regular file", lambda: opener(path))


@pytest.mark.parametrize("name", [JOURNAL_FILE, SERVICE_FILE])
def test_a_store_missing_its_last_byte_is_refused(committed, name):
    path = committed / name
    path.write_bytes(path.read_bytes()[:-1])
    _refused(OPEN[name][0], path, "is damaged", lambda: OPEN[name][1](path))


def test_an_index_that_disagrees_with_its_table_is_refused_though_quick_check_passes(committed):
    path = committed / SERVICE_FILE
    db = sqlite3.connect(path)
    root, size = (
        db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_events_1'").fetchone()[0],
        db.execute("PRAGMA page_size").fetchone()[0],
    )
    db.close()
    data = bytearray(path.read_bytes())
    page = slice((root - 1) * size, root * size)
    assert data[page].count(b"evt_6K2") == 1
    data[page] = bytes(data[page]).replace(b"evt_6K2", b"evt_6K9")  # the index now names an event the table lacks
    path.write_bytes(bytes(data))
    assert sqlite3.connect(path).execute("PRAGMA quick_check").fetchone()[0] == "ok"
    _refused(
        CalendarStoreError,
        path,
        r"is damaged \(truncated or corrupt; integrity_check\)",
        lambda: OPEN[SERVICE_FILE][1](path),
    )


@pytest.mark.parametrize(
    "extra, what",
    [
        ("CREATE TRIGGER twice AFTER INSERT ON events BEGIN SELECT 1; END", "an extra trigger 'twice'"),
        ("CREATE VIEW booked AS SELECT * FROM events", "an extra view 'booked'"),
        ("CREATE INDEX by_key ON events (idempotency_key)", "an extra index 'by_key'"),
        ("CREATE TABLE notes (body TEXT)", "an extra table 'notes'"),
    ],
)
def test_a_store_with_an_extra_object_in_its_schema_is_refused(committed, extra, what):
    path = committed / SERVICE_FILE
    _sql(path, extra)
    message = _refused(CalendarStoreError, path, "has another schema", lambda: OPEN[SERVICE_FILE][1](path))
    assert what in message, message


JOURNAL_DAMAGE = {
    "an unknown state": ("UPDATE invocations SET state = 'BOGUS'", "state must be one of the machine's"),
    "invocation text that is not JSON": ("UPDATE invocations SET invocation_json = '{oops'", "invocation_json"),
    "a budget that is not an integer": ("UPDATE invocations SET retry_budget = 'many'", "retry_budget must be"),
    "a flipped bit in the key": (
        "UPDATE invocations SET idempotency_key = 'req-s0i0:create-event:3'",
        "names an attempt beyond",
    ),
    "a key of another format": ("UPDATE invocations SET idempotency_key = 'req s0i0'", "idempotency_key must be"),
    "a digest of another format": ("UPDATE invocations SET request_digest = 'sha256:xyz'", "request_digest must be"),
    "a key its send did not use": (
        "UPDATE invocations SET idempotency_key = 'req-s0i1:create-event:1'",
        "its last move to EXECUTING sent",
    ),
    "a path that skips a state": ("DELETE FROM transitions WHERE to_state = 'EXECUTING'", "the move before it"),
    "a commit that is not an object": (
        "UPDATE transitions SET detail_json = '[1]' WHERE to_state = 'COMMITTED'",
        "must be a JSON object",
    ),
}

PATH_DAMAGE = ("a key its send did not use", "a path that skips a state")


@pytest.mark.parametrize("case", JOURNAL_DAMAGE)
def test_a_journal_value_no_labkit_writes_is_refused_at_open_and_at_read(committed, case):
    path = committed / JOURNAL_FILE
    statement, match = JOURNAL_DAMAGE[case]
    journal = Journal(path, create=False)  # opened while intact, damaged under it: the read refuses it
    _sql(path, statement)
    _refused(JournalError, path, match, lambda: Journal(path, create=False))
    if case not in PATH_DAMAGE:  # a row read back is checked again; a path is checked at open
        with pytest.raises(JournalError, match=str(path)):
            journal.entry("s0i0"), journal.committed_result("s0i0"), journal.transitions("s0i0")[0][1]


CALENDAR_DAMAGE = {
    "a stored response that is a list": ("UPDATE idempotency SET response_json = '[]'", "must be a JSON object"),
    "a stored response of no known status": (
        'UPDATE idempotency SET response_json = \'{"status": "maybe"}\'',
        "status in",
    ),
    "a flipped bit in the key": (
        "UPDATE idempotency SET key = 'req-s0i0:create-evenu:1'",
        "the key's stored response is None",
    ),
    "a digest of another format": ("UPDATE idempotency SET request_digest = 'sha256:0'", "request digest"),
    "an event whose record names another key": (
        "UPDATE events SET idempotency_key = 'req-s0i0:create-event:2'",
        "holds a record of",
    ),
    "an event without its counted execution": ("UPDATE counters SET value = 0 WHERE name = 'executions'", "counter"),
}


@pytest.mark.parametrize("case", CALENDAR_DAMAGE)
def test_a_calendar_value_no_service_writes_is_refused_at_open(committed, case):
    path = committed / SERVICE_FILE
    statement, match = CALENDAR_DAMAGE[case]
    _sql(path, statement)
    _refused(CalendarStoreError, path, match, lambda: OPEN[SERVICE_FILE][1](path))


def test_a_value_damaged_after_open_is_refused_when_read(committed):
    path = committed / SERVICE_FILE
    service = CalendarService(CLOCK, path=str(path), create=False)
    _sql(path, "UPDATE idempotency SET response_json = '[]'", "UPDATE events SET record_json = 'x'")
    _refused(CalendarStoreError, path, "stored response", lambda: service.stored("req-s0i0:create-event:1"))
    _refused(CalendarStoreError, path, "record_json", lambda: service.store)


def test_a_calendar_that_lost_the_journals_commit_is_refused_at_the_restart(committed):
    (committed / SERVICE_FILE).unlink()
    CalendarService(CLOCK, path=str(committed / SERVICE_FILE)).db.close()  # a fresh, empty calendar in its place
    message = _refused(
        JournalError,
        committed / SERVICE_FILE,
        "disagree",
        lambda: open_stores(committed, JOURNAL_FILE, "idempotent", 1.0),
    )
    assert str(committed / JOURNAL_FILE) in message and "s0i0 committed evt_6K2, the calendar holds []" in message


def test_an_event_the_journal_never_sent_is_refused_at_the_restart(committed):
    service = CalendarService(CLOCK, path=str(committed / SERVICE_FILE), create=False)
    invocation = make_invocation("s0i0", minute=5)
    args = invocation.normalized_arguments
    service.create_event(
        CreateRequest("req-s0i0:create-event:2", request_digest(args), "user-42/primary", invocation.tool, args)
    )
    service.db.close()
    with pytest.raises(StoreError, match="under key 'req-s0i0:create-event:2', which it never sent"):
        open_stores(committed, JOURNAL_FILE, "idempotent", 1.0)


def _create(service, key, **changes):
    invocation = make_invocation("inv_t")
    args = {**invocation.normalized_arguments, **changes}
    return service.create_event(CreateRequest(key, request_digest(args), "user-42/primary", invocation.tool, args))


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"title": "   "}, "title must be a non-blank text"),
        ({"title": ""}, "title must be a non-blank text"),
        ({"start": "2026-11-01T01:30:00"}, "with its UTC offset"),
        ({"start": "tomorrow"}, "with its UTC offset"),
    ],
)
def test_the_calendar_refuses_a_blank_title_or_a_start_without_its_offset(changes, match):
    service = CalendarService(CLOCK)
    answer = _create(service, "k-bad", **changes)
    assert (answer["status"], answer["code"]) == ("error", "invalid_arguments") and match in answer["detail"]
    assert service.store == {} and _create(service, "k-bad", **changes)["replayed"] is True
