"""The tool-call scenario player's data: each scenario's golden trace (``fixtures/traces/tool-<name>.jsonl``),
the journal from running it (``run_tool_trace``, whose events a test checks equal the golden trace) and
its first divergence from the happy path.

    data = {"player": "scenarios", "start": name, "crash_points": [..] (offered when a kernel listens),
            "scenarios": {name: {"description", "events": [[id, type, state, detail], …],
                "commit": index of the first event with the side effect | None,
                "attempts": [[index, attempt], …],
                "journal": [[from_state, to_state, event_id], …],
                "entry": {"attempts", "retry_budget", "state", "idempotency_key"} | None,
                "final_state", "request_status",
                "divergence": None | {"event_id", "rule", "field"}}}}
"""

from labkit.core.events import read_golden
from labkit.reader.players.data import one_of, words
from labkit.reader.players.divergence import DESCRIPTIONS
from labkit.tools.executor import CRASH_POINTS, CrashPlan
from labkit.tools.faults import FAULTS, SCENARIOS, faulty_config
from labkit.tools.fixture import golden_file
from labkit.tools.runtime import run_tool_trace
from labkit.trace.divergence import first_divergence

#: payload fields worth a glance beside the state, in this order
DETAIL_FIELDS = ("attempt", "decision", "resolved_by", "side_effect", "finish_reason", "request_status", "reason")
#: what the player shows of the journal's (last) entry
ENTRY_FIELDS = ("attempts", "retry_budget", "state", "idempotency_key")
START = "timeout_before_commit"
#: what the player says of the golden run (the faults describe themselves in labkit.tools.faults)
HAPPY_DESCRIPTION = words(
    "the happy path: every check passes and the event is created once", "正常路径：每项检查都通过，日历事件只创建一次"
)


def golden_events(name: str) -> list[dict]:
    return read_golden(golden_file(name))


def event_row(event: dict) -> list[str]:
    payload = event["payload"]
    state = payload.get("state") or payload.get("journal_state") or ""
    detail = " ".join(f"{k}={payload[k]}" for k in DETAIL_FIELDS if k in payload)
    return [event["event_id"], event["event_type"], state, detail]


def scenario_data(name: str, events: list[dict], run, happy: list[dict] | None) -> dict:
    """One scenario: ``events`` (its trace) and the ``run`` that produced them (for the journal)."""
    commit = next((i for i, e in enumerate(events) if e["payload"].get("side_effect") is True), None)
    attempts = [[i, e["payload"]["attempt"]] for i, e in enumerate(events) if "attempt" in e["payload"]]
    journal, entry = [], None
    for record in run.journal.entries():
        journal += [list(t) for t in run.journal.transitions(record.invocation_id)]
        entry = {field: getattr(record, field) for field in ENTRY_FIELDS}
    found = None if happy is None else first_divergence(happy, events)
    return {
        "description": words(FAULTS[name].description, DESCRIPTIONS.get(name, FAULTS[name].description))
        if name in FAULTS
        else dict(HAPPY_DESCRIPTION),
        "events": [event_row(e) for e in events],
        "commit": commit,
        "attempts": attempts,
        "journal": journal,
        "entry": entry,
        "final_state": run.final_state,
        "request_status": run.request_status,
        "divergence": None
        if found is None
        else {"event_id": found.event_ids[1] or found.event_ids[0], "rule": found.rule, "field": found.field},
    }


def run_scenario(name: str, crash: str | None = None):
    config = faulty_config(None if name == "happy" else name)
    if crash:
        config = config.replace(crashes=(CrashPlan(crash),))
    return run_tool_trace(config)


def static_data(runs: dict | None = None) -> dict:
    """Every scenario of ``labkit.tools.faults.SCENARIOS``: golden trace, journal, divergence.
    ``runs`` (name → ToolRun) reuses runs a page already made; missing ones are run here."""
    runs = runs or {}
    happy = golden_events("happy")
    scenarios = {}
    for name in SCENARIOS:
        run = runs[name] if name in runs else run_scenario(name)
        scenarios[name] = scenario_data(name, golden_events(name), run, None if name == "happy" else happy)
    return {
        "title": words("Trace three: every scenario, event by event", "轨迹三：每个场景，逐个事件"),
        "start": START,
        "scenarios": scenarios,
        "crash_points": list(CRASH_POINTS),
    }


def recompute(data: dict, request: dict) -> dict:
    """``request = {"scenario": name, "crash": point}``: the scenario run with a crash point
    added, shown as ``"<name> + crash <point>"``."""
    name = one_of("scenario", request.get("scenario"), SCENARIOS)
    crash = one_of("crash", request.get("crash") or None, CRASH_POINTS, optional=True)
    if crash is None:
        return {**data, "start": name}
    run = run_scenario(name, crash)
    label = f"{name} + crash {crash}"
    entry = scenario_data(name, run.events, run, golden_events("happy"))
    entry["description"]["en"] += f"; the runtime also crashes {crash.replace('_', ' ')}"
    entry["description"]["zh"] += f"；运行时还会崩溃：{crash}"
    return {**data, "start": label, "scenarios": {**data["scenarios"], label: entry}}
