"""Normalise validated arguments into an Invocation with the fixed clock and timezone (t04).

    start = local_date + local_time in the runtime's IANA timezone, as RFC 3339 with offset

2026-07-20 09:00 in Asia/Shanghai becomes ``2026-07-20T09:00:00+08:00``.  Refused: a local time a clock
change skips or repeats, or not after the reference clock; free text hiding what a reader of the calendar
cannot see (controls, separators, bidi overrides, invisible format characters; a zero-width (non-)joiner
only between two visible characters, where scripts and emoji need it).
"""

import unicodedata
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime, time
from typing import Self
from zoneinfo import ZoneInfo

from labkit.tools.toolspec import ToolSpec


@dataclass(frozen=True)
class Invocation:
    """What may be executed: the tool, normalised arguments, the subject, the capability."""

    invocation_id: str
    tool: str
    normalized_arguments: dict = field(hash=False)
    subject: str
    required_capability: str

    def to_json(self) -> dict:
        return asdict(self)

    def with_arguments(self, invocation_id: str, **changes) -> Self:
        """A *new* Invocation (new ID, hence new digest) with some arguments changed."""
        unknown = sorted(set(changes) - set(self.normalized_arguments))
        if unknown:
            raise ValueError(
                f"unknown normalised arguments {unknown}; expected some of {sorted(self.normalized_arguments)}"
            )
        if invocation_id == self.invocation_id:
            raise ValueError(f"a changed Invocation needs a new invocation_id, got {invocation_id!r} again")
        return replace(self, invocation_id=invocation_id, normalized_arguments={**self.normalized_arguments, **changes})


def parse_clock(clock: str) -> datetime:
    try:
        value = datetime.fromisoformat(clock)
    except (TypeError, ValueError):
        raise ValueError(f"clock must be an RFC 3339 date-time with offset, got {clock!r}") from None
    if value.tzinfo is None:
        raise ValueError(f"clock must carry a UTC offset, got {clock!r}")
    return value


def free_text(name: str, text: str) -> str:
    """``text`` unchanged when every character shows and one at least is more than a space;
    otherwise ``ValueError`` naming the first hidden character (or saying the text is blank)."""
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a string, got {type(text).__name__}")
    if text.isspace():  # a card that says “   ” asks the user to approve nothing they can read
        raise ValueError(f"{name} must be visible text, got only spaces ({text!r})")
    for index, ch in enumerate(text):
        category = unicodedata.category(ch)
        joiner = ch in "\u200c\u200d" and 0 < index < len(text) - 1
        if joiner and not (text[index - 1].isspace() or text[index + 1].isspace()):
            continue
        if category in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn"):
            raise ValueError(
                f"{name} must be visible text, got U+{ord(ch):04X} ({unicodedata.name(ch, category)}) at index {index}"
            )
    return text


def local_start(local_date: str, local_time: str, tz_name: str) -> datetime:
    """The aware datetime of a wall-clock date and HH:MM in ``tz_name``."""
    try:
        zone = ZoneInfo(tz_name)
    except (KeyError, ValueError):
        raise ValueError(f"timezone must be an IANA name such as 'Asia/Shanghai', got {tz_name!r}") from None
    wall = datetime.combine(date.fromisoformat(local_date), time.fromisoformat(local_time), tzinfo=zone)
    round_trip = wall.astimezone(UTC).astimezone(zone)
    if round_trip.replace(tzinfo=None) != wall.replace(tzinfo=None):
        raise ValueError(f"{local_date} {local_time} does not exist in {tz_name} (a clock change skips it)")
    earlier, later = wall.utcoffset(), wall.replace(fold=1).utcoffset()
    if earlier != later:  # the hour a clock change repeats: two instants, and the user approved one sentence
        raise ValueError(
            f"{local_date} {local_time} occurs twice in {tz_name} (a clock change repeats it, at UTC offsets "
            f"{_offset(earlier)} and {_offset(later)}): the start must say which"
        )
    return wall


def _offset(delta) -> str:
    minutes = int(delta.total_seconds()) // 60
    return f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def normalize(
    spec: ToolSpec, arguments: dict, *, invocation_id: str, clock: str, tz_name: str, subject: str
) -> Invocation:
    """Validated §7.11 arguments → the §7.12 Invocation."""
    start = local_start(arguments["local_date"], arguments["local_time"], tz_name)
    if start <= parse_clock(clock):
        raise ValueError(f"start {start.isoformat()} must be after the reference clock {clock}")
    calendar_id = arguments["calendar_id"]
    normalized = {
        "calendar_id": calendar_id,
        "title": free_text("title", arguments["title"]),  # nothing hidden: no controls, no direction overrides
        "start": start.isoformat(),
        "duration_minutes": arguments["duration_minutes"],
    }
    return Invocation(invocation_id, spec.ref, normalized, subject, f"calendar.write:{calendar_id}")
