"""The first-divergence explorer's data: for every named fault of every trace, its run beside the golden
trace and the first divergence (``labkit.trace.divergence``); values are shortened reprs.

    data = {"player": "divergence", "start": [kind, fault], "kinds": {kind: {
              "golden": [[event_id, event_type], …],
              "faults": {name: {"description", "events": [[event_id, event_type], …],
                                "divergence": None | {"index", "event_ids": [golden, faulty],
                                    "types": [golden, faulty], "rule", "field", "golden", "faulty",
                                    "suspect", "text"}}}}}}
"""

import tomllib
from pathlib import Path

from labkit.reader.players.data import words
from labkit.trace import catalogue
from labkit.trace.divergence import Divergence, _short, first_divergence

START = ("text", "perturbed_weight")

#: the faults' descriptions (by fault name) and the suspects (by their English) in Chinese
ZH = tomllib.loads((Path(__file__).with_name("faults.zh.toml")).read_text(encoding="utf-8"))
DESCRIPTIONS, SUSPECTS = ZH["descriptions"], ZH["suspects"]


def timeline(events: list[dict]) -> list[list[str]]:
    return [[e["event_id"], e["event_type"]] for e in events]


def divergence_summary(found: Divergence | None) -> dict | None:
    if found is None:
        return None
    types = [(e or {}).get("event_type") for e in (found.event_a, found.event_b)]
    return {
        "index": found.index,
        "event_ids": list(found.event_ids),
        "types": types,
        "rule": found.rule,
        "field": found.field,
        "golden": _short(found.value_a),
        "faulty": _short(found.value_b),
        "suspect": words(found.suspect, SUSPECTS.get(found.suspect, found.suspect)),
        "text": found.describe(),
    }


def fault_data(kind: str, fault: str, golden: list[dict]) -> dict:
    """One fault of one kind: its run's timeline and the first divergence from the golden trace."""
    faulty = catalogue.run_events(kind, fault)
    description = catalogue.faults(kind)[fault].description
    return {
        "description": words(description, DESCRIPTIONS.get(fault, description)),
        "events": timeline(faulty),
        "divergence": divergence_summary(first_divergence(golden, faulty)),
    }


def static_data() -> dict:
    """Every fault of every trace kind."""
    out = {}
    for kind in catalogue.KINDS:
        golden = catalogue.golden(kind)
        out[kind] = {
            "golden": timeline(golden),
            "faults": {f: fault_data(kind, f, golden) for f in catalogue.faults(kind)},
        }
    return {
        "title": words(
            "First divergence: golden and faulty trace side by side", "第一次分歧：黄金轨迹与注入失败的轨迹并排"
        ),
        "kinds": out,
        "start": list(START),
    }
