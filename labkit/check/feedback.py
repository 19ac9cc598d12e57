"""How a verdict reads: level 1 (the first wrong run) shows where the answer diverges, the reader's own
value (never the expected one: that takes ``reveal``) and the idea to revisit; level 2 (``result.more()``,
or a second wrong run) adds the rule and where it breaks. Numbers are short (``labkit.reader.numbers.fmt``).
"""

import html
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from labkit.core import edition
from labkit.reader.numbers import fmt

SIGNIFICANT = 4
LIMIT = 200

#: colours of the verdict mark (GitHub's success and danger greens and reds: legible on white)
PASS_COLOUR = "#1a7f37"
FAIL_COLOUR = "#cf222e"
#: a task still open (GitHub's muted grey: 6.4:1 on white)
OPEN_COLOUR = "#57606a"

MORE_PROMPT = "result.more() shows the rule and a precise hint"
#: the labels of a verdict's rows (``lines``), shown in the edition's language
LABELS = ("first divergence", "rule", "your value", "idea", "hint", "more")
#: where the translations of the checks' words are: ``<language>.toml``, keyed by the English template
WORDS = Path(__file__).resolve().parent


def say(template: str, **fields) -> str:
    """``template`` (English) in the edition's language (``labkit/check/zh.toml``), formatted with ``fields``."""
    return edition.translate(WORDS, template, **fields)


@lru_cache(maxsize=4)
def exercise_texts(lang: str) -> dict[str, dict[str, str]]:
    """The exercises' texts in ``lang`` (``exercises.<lang>.toml``, by name), whitespace folded like the catalogue's."""
    found = tomllib.loads((WORDS / f"exercises.{lang}.toml").read_text(encoding="utf-8"))
    return {name: {k: " ".join(v.split()) for k, v in data.items()} for name, data in found.items()}


def exercise_text(name: str, part: str, english: str) -> str:
    """Exercise ``name``'s ``part`` in the edition's language (``english``, the catalogue's, when English)."""
    lang = edition.language()
    if lang == "en" or not english:
        return english
    return exercise_texts(lang).get(name, {}).get(part, english)


#: the mark of a verdict that is not a failure of the idea: the template untouched, or only the key can judge
MARKS = {"not attempted": "…", "unverified": "?"}


def _shape(value: Any, digits: int | None) -> Any:
    """``value`` with every float as ``fmt``'s text at ``digits`` significant digits (None: ``repr``, exact)."""
    if isinstance(value, float):
        return _Raw(repr(float(value)) if digits is None else fmt(float(value), digits=digits))
    if isinstance(value, np.generic):
        return _shape(value.item(), digits)
    if isinstance(value, np.ndarray):
        floats = {"float_kind": lambda v: _shape(v, digits)} if np.issubdtype(value.dtype, np.floating) else None
        return _Raw(np.array2string(value, threshold=40, separator=", ", formatter=floats))
    if isinstance(value, (list, tuple)):
        items = [_shape(v, digits) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _shape(v, digits) for k, v in value.items()}
    return value


class _Raw(str):
    """A string that prints without quotes inside a container's repr."""

    def __repr__(self) -> str:
        return str(self)


def short(value: Any, digits: int | None = SIGNIFICANT) -> str:
    """``value`` for display: floats short, strings unquoted, at most ``LIMIT`` characters."""
    shaped = _shape(value, digits)
    text = shaped if isinstance(shaped, str) else repr(shaped)
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"


def lines(result, level: int, prompt: str = MORE_PROMPT) -> list[tuple[str, str]]:
    """The (label, text) rows of a failed result at ``level`` (1 or 2); ``prompt`` says how to ask for level 2."""
    concept, hint, two = result.concept, result.hint, level >= 2
    # (label, shown when, text); "shown when" is read for its truthiness (a string, None or a bool)
    rows = (
        ("first divergence", result.where, result.where),
        ("rule", two and result.rule, result.rule),
        ("your value", result.where or result.rule, (result.where or result.rule) and short(result.got, 6)),
        ("idea", concept and (not two or concept != hint), concept),
        ("hint", two and hint, hint),
        ("more", not two and (result.rule or (hint and hint != concept)), prompt),
    )
    return [(label, text) for label, shown, text in rows if shown]


def _padded(label: str, width: int = 17) -> str:
    """``label`` in the edition's language, padded to ``width`` columns (a CJK character takes two)."""
    shown = say(label)
    return shown + " " * max(0, width - sum(2 if ord(c) > 0x2E80 else 1 for c in shown))


def as_text(result, level: int, prompt: str | None = None) -> str:
    """The verdict as plain text (the ``repr`` of a result)."""
    revealed = say(" (revealed)") if result.revealed else ""
    head = f"{'✔' if result.passed else MARKS.get(result.status, '✘')} {result.exercise}{revealed}: {result.message}"
    rows = [] if result.passed else lines(result, level, say(MORE_PROMPT) if prompt is None else prompt)
    return "\n".join([head] + [f"  {_padded(label)}: {text}" for label, text in rows])


def as_html(result, level: int) -> str:
    """The verdict as HTML: a coloured mark, then label/value rows that wrap at words."""
    colour, mark = (PASS_COLOUR, "✔") if result.passed else (FAIL_COLOUR, "✘")
    if result.status in MARKS:  # a task still to do, or one only the key judges: not a red failure
        colour, mark = OPEN_COLOUR, MARKS[result.status]
    revealed = say(" (revealed)") if result.revealed else ""
    head = (
        f'<div style="font-weight:600"><span style="color:{colour}">{mark}</span> '
        f"<code>{html.escape(result.exercise)}</code>{revealed}: {html.escape(result.message)}</div>"
    )
    rows = [] if result.passed else lines(result, level, say(MORE_PROMPT))
    cells = "".join(
        f'<tr><th style="text-align:left;vertical-align:top;padding:1px 8px 1px 0;'
        f'white-space:nowrap;font-weight:normal;color:#57606a">{html.escape(say(label))}</th>'
        f'<td style="text-align:left;padding:1px 0;white-space:normal;overflow-wrap:normal;'
        f'word-break:normal">{_cell(label, text)}</td></tr>'
        for label, text in rows
    )
    table = f'<table style="border-collapse:collapse;margin:2px 0 0 1.2em">{cells}</table>' if rows else ""
    return (
        f'<div class="labkit-check" style="border-left:3px solid {colour};padding:2px 8px;'
        f'max-width:80ch;line-height:1.45">{head}{table}</div>'
    )


def _cell(label: str, text: str) -> str:
    if label == "your value":
        return f"<code>{html.escape(text)}</code>"
    if label == "more":  # the call (code), then what it shows
        call, _, rest = text.partition(" ")
        return f"<code>{html.escape(call)}</code> {html.escape(rest)}"
    return html.escape(text)


def describe(exercise) -> str:
    """One line on an exercise (the ``repr`` of an ``Exercise``): kind, name, signature, task, page, points."""
    what = f"({', '.join(exercise.signature)})" if exercise.signature else say(" = <your value>")
    graded = say(", {points} point(s)", points=short(exercise.points))
    points = graded if exercise.graded else say(", a self-test")
    kind = say("{kind} exercise", kind=say(exercise.kind))
    return f"{kind} {exercise.name}{what} — {exercise.text('task')} [{exercise.page}{points}]"


@dataclass(frozen=True)
class Revealed:
    """An answer shown because the reader asked for it (``Exercise.reveal``)."""

    exercise: str
    text: str

    def __repr__(self) -> str:
        return say("revealed — {exercise} (recorded as revealed):", exercise=self.exercise) + f"\n{self.text}"
