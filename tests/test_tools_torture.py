"""Trace three under real crashes and racing clients (``harness/``, beside labkit).

The bounded run kills the runtime's child processes with SIGKILL at least 200 times and
races 3 clients on one key for 50 rounds; every invariant must hold.  The deliberately
broken configurations must make the same harness report violations, so it can fail.
Bad store files and a tampered approval are refused before anything is sent.
"""

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from _helpers import timed

from harness.crashes import CrashSchedule, crash_runs, prepare, run_child, run_schedule
from harness.report import context, journal_rows, pick_recovered, run_torture, timeline
from harness.workload import CLOCK, JOURNAL_FILE, SERVICE_FILE, VARIANT
from labkit.tools.calendar_service import CalendarService
from labkit.tools.confirm import ConfirmationError
from labkit.tools.invariants import INVARIANTS, take
from labkit.tools.journal import Journal
from labkit.tools.recovery import recover
from labkit.tools.store import StoreError

# Slow tier: out of `make test-fast`, in `make test` (see CONTRIBUTING, test tiers).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ctx():
    return context()


@pytest.fixture(scope="module")
def bounded():
    return timed(run_torture, kills=200, clients=3, races=50, seed=20)


def test_a_bounded_run_kills_200_times_races_50_rounds_and_keeps_every_promise(bounded):
    report, seconds = bounded
    assert report.ok, "\n".join(report.lines(examples=10))
    assert report.kills >= 200 and report.restarts == report.kills
    assert report.races == 50 and sum(r["invocation_id"].startswith("race") for r in report.race_results) == 150
    unchecked = [name for name, checks, _ in report.invariant_rows() if checks == 0]
    assert unchecked == [], f"invariants never exercised: {unchecked}"
    assert report.checks["restart_queries_first"] == report.restarts
    assert seconds < 300, f"the bounded run took {seconds:.0f} s (about 20 s on an idle 2-core machine)"


def test_the_kills_land_everywhere_on_the_execute_path(bounded):
    report, _ = bounded
    killed = [i for run in report.runs for i in run.incarnations if i.ending == "killed"]
    before = {i.sql.split(" ")[0] for i in killed}
    assert {"BEGIN", "INSERT", "UPDATE", "COMMIT", "SELECT"} <= before, before
    assert {i.mode for i in killed} == {"execute", "recover"}, "restarts must be killed too"
    assert pick_recovered(report.runs), "some kill must fall between a service commit and its journal record"


def test_racing_clients_get_one_commit_and_the_stored_response(bounded):
    report, _ = bounded
    shared = [r for r in report.race_results if r["invocation_id"].startswith("race")]
    by_round = {}
    for r in shared:
        by_round.setdefault(r["round"], set()).add(r["event_id"])
    assert all(len(events - {None}) == 1 for events in by_round.values()), by_round
    assert any(r["state"] == "FAILED" for r in shared), "a same-key request with another digest must be refused"


def test_a_service_without_its_idempotency_check_is_caught(ctx):
    report = run_torture(kills=20, clients=3, races=3, seed=20, service="no_idempotency")
    found = {name for name, _ in report.violations}
    assert "one_commit_per_key" in found, report.lines()
    assert {"one_event_per_commit", "no_event_without_commit"} & found, (
        f"the crash schedules alone must catch it too: {sorted(found)}"
    )
    assert not report.ok


def test_a_runtime_that_journals_after_the_send_is_caught(ctx):
    report = run_torture(kills=20, clients=2, races=0, seed=20, runtime="journal_after_send")
    found = {name for name, _ in report.violations}
    assert "events_authorised" in found, report.lines()


def test_the_cli_exits_non_zero_on_a_violation(capsys):
    from harness.__main__ import main

    assert main(["--kills", "6", "--races", "2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "all invariants held" in out and "kills (SIGKILL)" in out
    assert main(["--kills", "0", "--races", "3", "--service", "no_idempotency"]) == 1
    assert "one_commit_per_key" in capsys.readouterr().out


def test_a_runtime_that_fails_ends_the_crash_schedules(ctx, tmp_path):
    """An incarnation that fails with an error stops the schedules, which would never reach their kills."""
    runs = list(crash_runs(ctx, 5, 0, tmp_path, {**VARIANT, "service": "no_such_service"}))
    assert len(runs) == 1 and runs[0].kills == 0, [run.kills for run in runs]
    assert [name for name, _ in runs[0].violations] == ["runtime_ran"], runs[0].violations
    assert "service must be one of" in runs[0].incarnations[0].detail


def test_a_kill_is_a_real_sigkill_before_the_counted_statement(ctx, tmp_path):
    schedule = CrashSchedule(0, 1, 0, 3, (), ((),), ((),))
    prepare(schedule, tmp_path / "s")
    job = {"dir": str(tmp_path / "s"), "service": "idempotent", "runtime": "journal_first"}
    full = run_child(ctx, {**job, "mode": "execute", "kill_at": None, "dir": str(tmp_path / "s")})
    assert full.ending == "done" and full.statements > 10
    prepare(schedule, tmp_path / "k")
    killed = run_child(ctx, {**job, "mode": "execute", "kill_at": 3, "dir": str(tmp_path / "k")})
    assert (killed.ending, killed.statements) == ("killed", 3)
    snap = take([tmp_path / "k" / JOURNAL_FILE], tmp_path / "k" / SERVICE_FILE)
    assert (
        snap.states() == {"s0i0": "PREPARED"}
        and snap.events == []
        and snap.integrity == {JOURNAL_FILE: "ok", SERVICE_FILE: "ok"}
    )


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
def test_the_harness_kills_with_sigkill(ctx, tmp_path):
    prepare(CrashSchedule(0, 1, 0, 3, (), ((),), ((),)), tmp_path / "s")
    here = run_child(
        ctx,
        {
            "dir": str(tmp_path / "s"),
            "service": "idempotent",
            "runtime": "journal_first",
            "mode": "execute",
            "kill_at": 5,
        },
    )
    assert (here.ending, here.exitcode) == ("killed", -signal.SIGKILL)


def test_the_timeline_shows_the_journal_before_and_after_the_recovery(bounded):
    report, _ = bounded
    run, inv, index = pick_recovered(report.runs)
    rows = timeline(run, inv)
    assert rows[index][2].startswith("killed") and rows[index][4] == "EXECUTING" and rows[index][5] != "none"
    assert rows[-1][4] == "COMMITTED" and rows[-1][5] == rows[index][5], "recovery found the event, made none"
    before, after = (
        journal_rows(run.incarnations[index].snapshot, inv),
        journal_rows(run.incarnations[-1].snapshot, inv),
    )
    assert before[-1][2] == "EXECUTING" and after[: len(before)] == before
    assert after[-1][2] == "COMMITTED" and after[-1][3] == rows[-1][5]


# -- bad inputs: refused with a clear error, nothing executed ------------------------------------------


def _prepared(tmp_path):
    where = tmp_path / "run"
    prepare(CrashSchedule(0, 1, 0, 3, (), ((),), ((),)), where)
    return where, where / JOURNAL_FILE, where / SERVICE_FILE


def _refused(ctx, where, match):
    here = run_child(
        ctx,
        {
            "dir": str(where),
            "service": "idempotent",
            "runtime": "journal_first",
            "mode": "recover",
            "kill_at": None,
            "timeout": 0.2,
        },
    )
    assert here.ending == "refused", (here.ending, here.detail)
    assert match in here.detail, here.detail
    assert here.ops == [], "nothing may be sent or queried"
    return here


def _untouched(service_file):
    db = sqlite3.connect(service_file)
    counters = dict(db.execute("SELECT name, value FROM counters"))
    events = db.execute("SELECT count(*) FROM events").fetchone()[0]
    db.close()
    assert counters == {"requests": 0, "executions": 0} and events == 0


def test_a_journal_of_another_schema_version_is_refused(ctx, tmp_path):
    where, journal, service = _prepared(tmp_path)
    sqlite3.connect(journal).execute("PRAGMA user_version = 7").connection.close()
    with pytest.raises(StoreError, match=r"journal .* has schema version 7, this labkit reads version 1"):
        Journal(journal)
    _refused(ctx, where, "schema version 7")
    _untouched(service)


def test_a_calendar_store_of_another_schema_version_is_refused(ctx, tmp_path):
    where, _, service = _prepared(tmp_path)
    sqlite3.connect(service).execute("PRAGMA user_version = 2").connection.close()
    with pytest.raises(StoreError, match="calendar store .* has schema version 2"):
        CalendarService(CLOCK, path=str(service))
    _refused(ctx, where, "calendar store")


@pytest.mark.parametrize("keep", [0.5, 60])
def test_a_truncated_journal_is_refused(ctx, tmp_path, keep):
    where, journal, service = _prepared(tmp_path)
    data = journal.read_bytes()
    journal.write_bytes(data[: int(len(data) * keep)] if keep < 1 else data[:keep])
    with pytest.raises(StoreError, match="journal .* (is damaged|is not an intact SQLite database)"):
        Journal(journal)
    _refused(ctx, where, str(journal))
    _untouched(service)


def test_a_locked_journal_is_refused(ctx, tmp_path):
    where, journal, service = _prepared(tmp_path)
    holder = sqlite3.connect(journal, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match=r"journal .* is locked by another process \(waited 0.1 s\)"):
            Journal(journal, timeout=0.1)
        _refused(ctx, where, "is locked by another process")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _untouched(service)


def test_a_journal_entry_whose_approved_digest_does_not_match_is_refused(ctx, tmp_path):
    where, journal_file, service = _prepared(tmp_path)
    journal = Journal(journal_file)
    journal.update("s0i0", approved_digest="sha256:" + "0" * 64)
    with pytest.raises(ConfirmationError, match="s0i0 was approved for digest sha256:000000000000…"):
        recover(journal, None)
    journal.close()
    here = _refused(ctx, where, "refusing to recover anything")
    assert "s0i0" in here.detail
    _untouched(service)
    assert take([journal_file], service).states() == {"s0i0": "PREPARED"}


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda: run_torture(kills=-1), "kills must be an integer >= 0"),
        (lambda: run_torture(kills=True), "kills must be an integer >= 0"),
        (lambda: run_torture(kills=0, clients=0), "clients must be an integer >= 1"),
        (lambda: run_torture(kills=0, service="trusting"), "service must be one of"),
        (lambda: run_torture(kills=0, runtime="yolo"), "runtime must be one of"),
        (lambda: run_torture(kills=0, start_method="teleport"), "start_method must be one of"),
    ],
)
def test_bad_torture_arguments_are_refused_by_name(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


def test_every_invariant_is_named_in_the_report():
    report = run_torture(kills=0, races=0)
    assert [row[0] for row in report.invariant_rows()] == list(INVARIANTS)
    assert report.ok and report.schedules == 0


def test_a_schedule_with_an_unapproved_invocation_never_executes_it(ctx, tmp_path):
    run = run_schedule(ctx, CrashSchedule(3, 1, 1, 2, (7,), ((), ()), ((), ())), tmp_path / "s")
    final = run.incarnations[-1].snapshot
    assert final.states()["s3i1"] == "PREPARED" and final.events_for("req-s3i1:") == []
    assert run.violations == [] and run.kills == 1


def test_two_clients_cannot_both_find_a_key_free(tmp_path):
    """Client A's lookup finds the key free and then A dawdles before executing; client B, on its own
    connection, sends the same request meanwhile.  B must wait for A's transaction and get A's stored
    response — were lookup and execution two transactions, B would execute too (two events)."""
    import threading

    from harness.workload import make_invocation
    from labkit.tools.calendar_service import CreateRequest, idempotent_execute
    from labkit.tools.confirm import request_digest

    path = str(tmp_path / "calendar.sqlite")
    b_done = threading.Event()

    def dawdling(desk, key, digest, request):
        record = desk.stored(key)
        if record is None:
            threading.Thread(target=client_b, daemon=True).start()
            b_done.wait(1.0)  # B blocks on A's transaction, so this times out
        return idempotent_execute(desk, key, digest, request)

    invocation = make_invocation("inv_race")
    args = invocation.normalized_arguments
    request = CreateRequest("k-race", request_digest(args), "user-42/primary", invocation.tool, args)
    answers = {}

    def client_b():
        answers["b"] = CalendarService(CLOCK, path=path, timeout=30).create_event(request)
        b_done.set()

    service_a = CalendarService(CLOCK, path=path, execute=dawdling, timeout=30)
    answers["a"] = service_a.create_event(request)
    assert b_done.wait(30), "client B never got an answer"
    assert answers["a"]["status"] == "ok" and answers["b"] == {**answers["a"], "replayed": True}
    assert sorted(service_a.store) == [answers["a"]["event_id"]] and service_a.executions == 1


def test_a_kill_before_every_statement_of_one_execution_recovers_with_one_event(ctx, tmp_path):
    """Exhaustive, for one approved invocation with a budget of one attempt: a kill before each
    statement in turn, then a restart.  (Journaling the attempt's key and its move to EXECUTING
    in two transactions failed here: a kill between them left PREPARED with the attempt spent.)"""
    full = run_schedule(ctx, CrashSchedule(0, 1, 0, 1, (10_000,), ((), ()), ((), ())), tmp_path / "full")
    statements = full.incarnations[0].statements
    assert full.incarnations[0].ending == "done" and statements > 15
    endings = Counter()
    for k in range(1, statements + 1):
        run = run_schedule(ctx, CrashSchedule(k, 1, 0, 1, (k,), ((), ()), ((), ())), tmp_path / f"k{k}")
        assert run.kills == 1 and run.violations == [], (k, run.incarnations[0].sql, run.violations)
        final = run.incarnations[-1].snapshot
        endings[(final.states()[f"s{k}i0"], len(final.events))] += 1
    # killed before the request reached the service: the query finds nothing, the one attempt is spent
    assert set(endings) == {("COMMITTED", 1), ("FAILED", 0)}, endings


def test_the_harness_catches_a_failed_ending_while_the_calendar_holds_the_event(ctx, tmp_path):
    """The schedule the full run (seed 0) found: a lost answer, a failed lookup, then 'unavailable'
    for the resend.  The runtime used to end FAILED with the event in the calendar."""
    schedule = CrashSchedule(0, 1, 0, 2, (), (("lose_response", "unavailable"),), (("unavailable",),))
    run = run_schedule(ctx, schedule, tmp_path / "s")
    assert run.violations == []
    final = run.incarnations[-1].snapshot
    assert final.states() == {"s0i0": "COMMITTED"} and final.events == [("evt_6K2", "req-s0i0:create-event:1")]


def test_timer_kills_land_mid_run_and_every_promise_holds():
    """SIGKILLs at a random moment (a timer from the child's ready), not before a counted statement."""
    report = run_torture(kills=0, timer_kills=20, clients=1, races=0, seed=7)
    assert report.ok, "\n".join(report.lines(examples=10))
    assert report.kills == report.timer_kills >= 20 and report.restarts == report.kills
    killed = [i for run in report.runs for i in run.incarnations if i.ending == "killed"]
    assert all(i.sql is None and i.kill_after is not None for i in killed), "timer kills name no statement"
    assert any(i.ops for i in killed), "some timer must fire after the child began talking to the service"
    assert report.checks["restart_queries_first"] == report.restarts


def test_a_service_without_its_idempotency_check_is_caught_under_timer_kills():
    report = run_torture(kills=0, timer_kills=20, clients=1, races=0, seed=8, service="no_idempotency")
    assert {"one_event_per_commit", "no_event_without_commit"} & {name for name, _ in report.violations}


def test_the_cli_runs_timer_kills(capsys):
    from harness.__main__ import main

    assert main(["--kills", "0", "--timer-kills", "5", "--races", "0"]) == 0
    assert "all invariants held" in capsys.readouterr().out


def test_a_bad_keep_folder_is_one_line_and_exit_2_before_any_work(tmp_path, capsys):
    from harness.__main__ import main

    (tmp_path / "a-file.txt").write_text("")
    with pytest.raises(SystemExit) as exit_:
        main(["--keep", str(tmp_path / "a-file.txt")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "--keep" in err and "a-file.txt" in err and "Traceback" not in err, err


@pytest.mark.slow
def test_python_m_harness_runs_from_the_clone():
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--kills", "2", "--races", "1"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and "all invariants held" in proc.stdout, proc.stdout + proc.stderr


PRELOADED = """
from labkit.core.fixtures import import_from_book
import_from_book("harness", {book!r})
from harness.report import context
with context().Pool(1) as pool:
    print(pool.apply(eval, ("'harness.preload' in __import__('sys').modules",)))
"""


def test_the_fork_server_preloads_the_harness_from_any_folder(tmp_path):
    """A page's kernel runs in the page's folder, where ``harness`` is not importable by name: the fork server
    still starts with it loaded, so no crash incarnation or racing client imports it again."""
    book = str(Path(__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = PRELOADED.format(book=book)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.stdout.split() == ["True"], done.stderr[-2000:]
