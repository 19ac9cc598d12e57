"""The one JSON reader of the kit, and JSON Schema validation as the standard means it.

Every JSON the kit reads comes through ``loads``/``read_json_file``/``iter_json_lines``, which refuse what Python's
``json`` lets through: ``NaN``, ``Infinity`` and numbers such as ``1e400`` that overflow to it, duplicate keys
(``json`` keeps the last one silently), bytes that are not UTF-8, escaped lone surrogates, nesting deeper than
``MAX_DEPTH`` and inputs larger than ``MAX_BYTES``; ``JSONInputError`` names the source (file and line) and the rule.

``schema_validator`` is Draft 2020-12 with ``pattern`` as ECMA-262 means it (``$`` only at the very end, where
Python's ``re`` also matches before a final newline; ``\\d``, ``\\w`` ASCII), and ``format`` asserted for ``date``,
the one format the book's schemas use, without loading jsonschema's URI grammars.
"""

import json
import re
import sys
from collections.abc import Iterator
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Any

MAX_DEPTH = 100
MAX_BYTES = 64 * 2**20


class JSONInputError(ValueError):
    """JSON the kit refuses; the message names where it came from and, in ``reason``, the rule."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where} is {reason}" if reason.startswith("not ") else f"{where}: {reason}")
        self.reason = reason


def _no_constant(name: str):
    raise _Refused(f"{name}, which is not a JSON number (only finite numbers are)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"the number {text[:40]}, which overflows to infinity")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) < len(pairs):
        seen: set[str] = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(f"a duplicate key {duplicate!r} (JSON objects name each key once)")
    return result


class _Refused(Exception):
    """Raised inside the decoder's hooks; turned into a JSONInputError with the source."""


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _depth_exceeds(text: str, limit: int) -> bool:
    """True when brackets outside strings nest deeper than ``limit`` (closed or not)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = re.sub(r"[^\[\]{}]", "", _STRING.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0) > limit


def loads(data: str | bytes, source: str = "JSON input", *, line: int | None = None) -> Any:
    """Parse one JSON document strictly; ``source`` (and ``line``) name it in any error."""
    where = f"{source} line {line}" if line is not None else source
    if len(data) > MAX_BYTES:
        raise JSONInputError(where, f"larger than {MAX_BYTES} bytes")
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(where, f"not UTF-8 at byte {exc.start}") from None
    if _depth_exceeds(data, MAX_DEPTH):
        raise JSONInputError(where, f"nested deeper than {MAX_DEPTH} levels")
    try:
        value = _DECODER.decode(data)
    except json.JSONDecodeError as exc:
        line_note = f" (line {exc.lineno})" if exc.lineno > 1 else ""
        raise JSONInputError(where, f"not JSON: {exc.msg} at character {exc.pos}{line_note}") from None
    except _Refused as exc:
        raise JSONInputError(where, str(exc)) from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise JSONInputError(where, f"unreadable ({type(exc).__name__}: {str(exc)[:80]})") from None
    if "\\u" in data:  # a lone surrogate, escaped, decodes to a str that UTF-8 cannot encode
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise JSONInputError(where, "not Unicode text: it holds an escaped lone surrogate") from None
    return value


def _not_too_large(path: str | Path) -> Path:
    path = Path(path)
    if path.stat().st_size > MAX_BYTES:
        raise JSONInputError(path.name, f"larger than {MAX_BYTES} bytes")
    return path


def read_json_file(path: str | Path) -> Any:
    """A whole file as one JSON document (``FileNotFoundError`` when it is missing)."""
    path = _not_too_large(path)
    return loads(path.read_bytes(), path.name)


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSON Lines file."""
    path = _not_too_large(path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, loads(raw, path.name, line=number)


# -- JSON Schema ------------------------------------------------------------------------------


#: one token of a pattern: an escaped pair, a whole character class (to its ``]`` or the end), a character
_PATTERN_TOKEN = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*(?:\]|\\?\Z)|.", re.DOTALL)
_ASCII_CLASSES = {"\\d": "0-9", "\\w": "A-Za-z0-9_"}


def _ecma_token(token: str) -> str:
    if token.startswith("[") and len(token) > 1:  # inside a class, \d and \w become ASCII ranges
        return re.sub(r"\\.", lambda pair: _ASCII_CLASSES.get(pair.group(), pair.group()), token)
    return "\\Z" if token == "$" else f"[{_ASCII_CLASSES[token]}]" if token in _ASCII_CLASSES else token


@lru_cache(maxsize=64)
def ecma_pattern(pattern: str) -> re.Pattern:
    """A JSON Schema ``pattern`` compiled for ``search`` with ECMA-262 meaning: ``$`` → ``\\Z``,
    ``\\d`` → ``[0-9]``, ``\\w`` → ``[A-Za-z0-9_]`` (inside and outside a character class)."""
    return re.compile("".join(_ecma_token(m.group()) for m in _PATTERN_TOKEN.finditer(pattern)))


#: the libraries jsonschema imports, when installed, for formats no schema of the book uses (URI,
#: host name, duration, colour, pointer…; rfc3987_syntax alone compiles 38 grammars at import)
UNUSED_FORMAT_LIBRARIES = ("fqdn", "idna", "isoduration", "jsonpointer", "rfc3339_validator", "rfc3986_validator")
UNUSED_FORMAT_LIBRARIES += ("rfc3987", "rfc3987_syntax", "uri_template", "webcolors")


def import_jsonschema():
    """jsonschema without the libraries of the formats the book does not use (``date`` needs
    none); they are hidden during its import only, so other code can still import them."""
    if "jsonschema" not in sys.modules:
        hidden = [name for name in UNUSED_FORMAT_LIBRARIES if name not in sys.modules]
        sys.modules.update(dict.fromkeys(hidden, None))
        try:
            import jsonschema
        finally:
            for name in hidden:
                if name in sys.modules and sys.modules[name] is None:
                    del sys.modules[name]
    import jsonschema

    return jsonschema


def _ecma_pattern_keyword(validator, pattern, instance, schema):
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def schema_validator(schema: dict):
    """A Draft 2020-12 validator for ``schema`` with ECMA-262 ``pattern`` and ``format: date``
    (the schema is checked against the metaschema once per distinct schema)."""
    return _checked_validator(json.dumps(schema, sort_keys=True))


@lru_cache(maxsize=16)
def _checked_validator(schema_text: str):
    jsonschema, schema = import_jsonschema(), json.loads(schema_text)
    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern_keyword})
    cls.check_schema(schema)
    return cls(schema, format_checker=jsonschema.FormatChecker(formats=["date"]))
