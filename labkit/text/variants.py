"""Trace one at the streaming edge (issue 45): real requests that differ from the fixture's, not faults.

Each variant is a change of ``TextTraceConfig`` a client or a deployment may make, with its golden trace
``fixtures/traces/text-<name>.jsonl``, its first divergence from trace one and its own checks.
"""

from dataclasses import dataclass

from labkit.core import faults as suspects
from labkit.core.faults import FirstDivergence
from labkit.text.config import TextTraceConfig

SPLIT_VOCABULARY = "toy-tokenizer-v1-split.json"


@dataclass(frozen=True)
class Variant:
    """A named request: what it changes (``config`` fields), what it shows, where it first differs."""

    name: str
    what: str
    changes: dict
    first_divergence: FirstDivergence

    def config(self) -> TextTraceConfig:
        return TextTraceConfig().replace(**self.changes)


VARIANTS = {
    v.name: v
    for v in (
        Variant(
            "stop_inside_token",
            "stop 光的 spans tokens 14 | 15 and ends inside 15: 光 is held back and never sent",
            {"stop_sequences": ("光的",)},
            FirstDivergence("e00", "discrete_state", "stop_sequences", suspects.STOP_CONDITIONS),
        ),
        Variant(
            "length_with_stop",
            "stop 更强？ never matches; the length limit (3 tokens) flushes the 2 held characters 更强",
            {"stop_sequences": ("更强？",), "max_output_tokens": 3},
            FirstDivergence("e00", "discrete_state", "max_output_tokens", suspects.STOP_CONDITIONS),
        ),
        Variant(
            "split_character",
            "a byte-level vocabulary splits 蓝 = e8 93 | 9d over tokens 14 and 15: the delta waits for 9d",
            {"vocabulary": SPLIT_VOCABULARY},
            FirstDivergence("e02", "artifact_ids", "artifacts.tokenizer_id", suspects.TEXT_ARTIFACTS),
        ),
        Variant(
            "disconnect_after_two_deltas",
            "the client disconnects after the second delta: abort, no decode, resources released once",
            {"disconnect_after_deltas": 2},
            FirstDivergence("e11", "event_type_and_parent", "event_type", suspects.CLIENT_DISCONNECT),
        ),
    )
}


def _payloads(run, event_type: str) -> list[dict]:
    return [e["payload"] for e in run.events if e["event_type"] == event_type]


def stop_never_sent(run):
    """The stop string, and everything after it, never reaches the client; finish_reason is stop."""
    stop = run.config.stop_sequences[0]
    text = run.returned_bytes.decode("utf-8")
    return stop not in text and run.finish_reason == "stop", f"returned {text!r}, finish {run.finish_reason}"


def held_back_is_len_stop_minus_one(run):
    """While no stop has matched, each delta holds back exactly len(stop) − 1 characters (fewer only
    when the text is shorter)."""
    hold = max(len(s) for s in run.config.stop_sequences) - 1
    held = [p["held_back"] for p in _payloads(run, "stream.delta") if p["token_id"] is not None]
    return all(len(h) == hold for h in held), f"held back {held}, hold {hold}"


def held_text_flushed_at_the_end(run):
    """A text ended by EOS or length sends what it held: the last delta carries no token."""
    last = _payloads(run, "stream.delta")[-1]
    return run.finish_reason in ("eos", "length") and last["token_id"] is None, f"last delta {last}"


def every_delta_is_whole_utf8(run):
    """No delta ends (or starts) inside a character: each decodes strictly as UTF-8."""
    deltas = [bytes.fromhex(p["utf8_hex"]) for p in _payloads(run, "stream.delta")]
    try:
        texts = [d.decode("utf-8") for d in deltas]
    except UnicodeDecodeError as exc:
        return False, f"a delta is not whole UTF-8: {exc}"
    return True, f"deltas {texts}"


def aborted_and_released_once(run):
    """A disconnected client: no decode after the disconnect, ABORTED and never FINISHED, one release."""
    types = [e["event_type"] for e in run.events]
    cut = types.index("client.disconnected") if "client.disconnected" in types else len(types)
    states = [e["payload"].get("state") for e in run.events]
    ok = "decode.started" not in types[cut:] and "ABORTED" in states and "FINISHED" not in states
    return ok and types.count("resources.released") == 1, f"after the disconnect {types[cut:]}"


CHECKS = {
    "stop_inside_token": (stop_never_sent, held_back_is_len_stop_minus_one, every_delta_is_whole_utf8),
    "length_with_stop": (held_back_is_len_stop_minus_one, held_text_flushed_at_the_end, every_delta_is_whole_utf8),
    "split_character": (every_delta_is_whole_utf8,),
    "disconnect_after_two_deltas": (aborted_and_released_once, every_delta_is_whole_utf8),
}


def check_variant(name: str, run) -> list[tuple[str, bool, str]]:
    """[(check, passed, detail)] for variant ``name``'s run (its own assertions, beside §7.5's eight)."""
    if name not in CHECKS:
        raise ValueError(f"name must be one of {sorted(CHECKS)}, got {name!r}")
    return [(check.__name__, *check(run)) for check in CHECKS[name]]
