"""What a player of the Chinese edition may still show in English, shared by ``tests/test_players.py``
(the bundles' word tables and the exporters' texts) and ``tests/browser/test_browser_players_zh.py``
(the players drawn in the static harness).

A word of two or more ASCII letters is English unless it is

- data: a word of the player's data outside its ``{en, zh}`` texts (token strings, event types and
  states, fault, scenario and field names — the data stays as it is);
- code: next to a digit, an underscore, a dot or a bracket (``z_999``, ``calendar.read``, ``allowed[i, j]``),
  all capitals (``KV``, ``JSON``, ``EOS``), or quoted (“…”, '…', `…`);
- a term the source chapters and the glossary keep in English (``TERMS``).
"""

from __future__ import annotations

import re

#: the terms the source chapters (and notebooks/glossary.md's Chinese column) write in English
TERMS = frozenset(
    "token logit logits decode mask batch nats ms std ddof eta log Philox Box Muller RoPE ToolSpec Invocation "
    "digest leading trailing".split()
)
WORD = re.compile(r"(?<![\w.])[A-Za-z]{2,}(?![\w.\[(])")
QUOTED = re.compile(r"“[^”]*”|'[^']*'|`[^`]*`|\"[^\"]*\"")
FIELD = re.compile(r"\{\w+\}")
CJK = re.compile(r"[\u3400-\u9fff]")


def is_words(value) -> bool:
    """An exporter's text in each language (``labkit.reader.players.data.words``)."""
    return isinstance(value, dict) and set(value) == {"en", "zh"}


def data_words(data) -> set[str]:
    """The words of ``data``'s strings outside its ``{en, zh}`` texts, case-folded; the keys of a mapping
    of records (name → dict or list: scenarios, modes, faults, panels) too, not a record's field names."""
    found: set[str] = set()
    stack = [data]
    while stack:
        value = stack.pop()
        if is_words(value):
            continue
        if isinstance(value, dict):
            records = value and all(isinstance(v, dict | list) and not is_words(v) for v in value.values())
            stack += [*value.values(), *(map(str, value) if records else ())]
        elif isinstance(value, list | tuple):
            stack += list(value)
        elif isinstance(value, str):
            found |= {w.casefold() for w in re.findall(r"[A-Za-z]+", value)}
    return found


def texts(data) -> list[dict]:
    """Every ``{en, zh}`` text of ``data``."""
    found, stack = [], [data]
    while stack:
        value = stack.pop()
        if is_words(value):
            found.append(value)
        elif isinstance(value, dict):
            stack += list(value.values())
        elif isinstance(value, list | tuple):
            stack += list(value)
    return found


def english_left(text: str, data: set[str] = frozenset()) -> list[str]:
    """The English words of ``text`` that are neither data, code nor a kept term (``{fields}`` dropped)."""
    plain = QUOTED.sub(" ", FIELD.sub(" ", text))
    return sorted({w for w in WORD.findall(plain) if not w.isupper() and w not in TERMS and w.casefold() not in data})
