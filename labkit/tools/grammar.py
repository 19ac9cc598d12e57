"""The JSON grammar mask: which tokens keep the output a viable prefix of a valid document.

``SchemaGrammar.from_schema`` compiles a ToolSpec's ``input_schema`` into one regular
expression for the compact JSON spelling (no whitespace, keys in ``properties`` order):

* object: ``{"key":value,…}`` with every required key, optional keys as optional groups,
  and nothing else — so ``additionalProperties`` must be ``false``;
* string: ``enum`` → the listed values; ``format: date`` → RFC 3339 full-date with real
  month lengths and leap years (so ``2026-02-30`` is not a viable prefix); ``pattern`` →
  the anchored pattern itself; otherwise 1 code point per character, ``"``, ``\\`` and control
  characters excluded, ``minLength``…``maxLength`` times;
* integer: ``minimum``…``maximum`` as a digit-range expression; boolean: ``true|false``.

A prefix is *viable* when ``regex.fullmatch(pattern, prefix, partial=True)`` matches: some
continuation completes it.  At a decode step with output text ``s`` the mask [V] is

    allowed[v] = viable(s + piece(v))      for ordinary pieces v
    allowed[stop] = fullmatch(pattern, s)   the document is complete

so every document the masked decoder stops on parses and validates.
"""

from dataclasses import dataclass, field
from functools import cached_property
from typing import Self

import numpy as np

from labkit.tools.tokenizer import compact_json

STRING_CHAR = r'[^"\\\x00-\x1f]'
YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"
MONTH_DAY = (
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
LEAP_DAY = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29"
FULL_DATE = rf"(?:{YEAR}-{MONTH_DAY}|{LEAP_DAY})"


def _digits_class(low: str, high: str) -> str:
    return low if low == high else f"[{low}-{high}]"


def _same_length_range(low: str, high: str) -> str:
    """Regex for the integers low…high written with the same number of digits."""
    if len(low) == 1:
        return _digits_class(low, high)
    if low[0] == high[0]:
        return low[0] + _same_length_range(low[1:], high[1:])
    rest = len(low) - 1
    parts = [low[0] + _same_length_range(low[1:], "9" * rest)]
    if int(high[0]) - int(low[0]) > 1:
        parts.append(_digits_class(str(int(low[0]) + 1), str(int(high[0]) - 1)) + f"[0-9]{{{rest}}}")
    parts.append(high[0] + _same_length_range("0" * rest, high[1:]))
    return "(?:" + "|".join(parts) + ")"


def integer_range_regex(minimum: int, maximum: int) -> str:
    """Decimal spellings (no leading zeros) of minimum…maximum, 0 <= minimum <= maximum."""
    if minimum < 0:
        raise ValueError(f"integer minimum must be >= 0 for this grammar, got {minimum}")
    if maximum < minimum:
        raise ValueError(f"integer maximum must be >= minimum ({minimum}), got {maximum}")
    parts = []
    for width in range(len(str(minimum)), len(str(maximum)) + 1):
        low = max(minimum, 10 ** (width - 1) if width > 1 else 0)
        high = min(maximum, 10**width - 1)
        if low <= high:
            parts.append(_same_length_range(str(low), str(high)))
    return "(?:" + "|".join(parts) + ")"


def _literal(value) -> str:
    import regex

    return regex.escape(compact_json(value))


def schema_regex(schema: dict, where: str = "input_schema") -> str:
    """The regular expression of every compact JSON document valid under ``schema``."""
    if not isinstance(schema, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(schema).__name__}")
    if "enum" in schema:
        return "(?:" + "|".join(_literal(v) for v in schema["enum"]) + ")"
    kind = schema.get("type")
    if kind == "object":
        return _object_regex(schema, where)
    if kind == "string":
        if "format" in schema:
            if schema["format"] != "date":
                raise ValueError(f"{where}.format: the grammar knows 'date' only, got {schema['format']!r}")
            return f'"{FULL_DATE}"'
        if "pattern" in schema:
            pattern = schema["pattern"]
            if not (pattern.startswith("^") and pattern.endswith("$")):
                raise ValueError(f"{where}.pattern must be anchored with ^…$, got {pattern!r}")
            return f'"(?:{pattern[1:-1]})"'
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        return f'"{STRING_CHAR}{{{low},{"" if high is None else int(high)}}}"'
    if kind == "integer":
        if "minimum" not in schema or "maximum" not in schema:
            raise ValueError(f"{where}: integers need both minimum and maximum for this grammar")
        return integer_range_regex(int(schema["minimum"]), int(schema["maximum"]))
    if kind == "boolean":
        return "(?:true|false)"
    raise ValueError(f"{where}.type {kind!r} is not supported by the grammar (object, string, integer, boolean)")


def _object_regex(schema: dict, where: str) -> str:
    if schema.get("additionalProperties") is not False:
        raise ValueError(f"{where}.additionalProperties must be false for a closed grammar")
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    unknown = [k for k in required if k not in properties]
    if unknown:
        raise ValueError(f"{where}.required names keys without properties: {unknown}")
    body, first = "", True
    for key, sub in properties.items():
        member = _literal(key) + ":" + schema_regex(sub, f"{where}.properties.{key}")
        if key in required:
            body += member if first else "," + member
            first = False
        elif first:
            raise ValueError(f"{where}: an optional key ({key!r}) before the first required key is not supported")
        else:
            body += f"(?:,{member})?"
    if first:
        raise ValueError(f"{where}: an object needs at least one required key for this grammar")
    return r"\{" + body + r"\}"


@dataclass
class SchemaGrammar:
    """A compiled schema grammar."""

    pattern: str
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_schema(cls, schema: dict) -> Self:
        return cls(schema_regex(schema))

    @cached_property
    def compiled(self):
        import regex

        return regex.compile(self.pattern)

    def viable(self, text: str) -> bool:
        """Some continuation of ``text`` is a complete document."""
        if text not in self._cache:
            self._cache[text] = self.compiled.fullmatch(text, partial=True) is not None
        return self._cache[text]

    def complete(self, text: str) -> bool:
        return self.compiled.fullmatch(text) is not None

    def mask(self, text: str, pieces, stop_id: int, control=frozenset()) -> np.ndarray:
        """allowed [V]: ordinary pieces that keep ``text`` viable; ``stop_id`` iff complete."""
        allowed = np.zeros(len(pieces), dtype=bool)
        for token, piece in enumerate(pieces):
            if token not in control:
                allowed[token] = self.viable(text + piece)
        allowed[stop_id] = self.complete(text)
        return allowed
