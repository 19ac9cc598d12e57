"""Parse the proposal's argument bytes and validate them against the ToolSpec (t02, t03).

Parsing is strict (``labkit.core.strictjson``): duplicate keys, ``NaN``, bytes that are not
UTF-8 and absurd nesting are refused here, before any schema sees them.  Validation uses
jsonschema's Draft 2020-12 validator *with* a format checker, so ``format: date`` is enforced
(``2026-02-30`` fails), not merely annotated, and ``pattern`` follows ECMA-262 as JSON Schema
says: ``"09:00\n"`` does not match ``^…$``.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.core.strictjson import JSONInputError, loads, schema_validator
from labkit.tools.toolspec import ToolSpec

VALIDATOR_NAME = "Draft 2020-12"


class ProposalError(ValueError):
    """Proposal bytes that are not a JSON object; the message says where parsing failed."""


def parse_arguments(raw: bytes) -> dict:
    """UTF-8 JSON bytes → the arguments object (t02)."""
    if not isinstance(raw, (bytes, bytearray)):
        raise ProposalError(f"proposal arguments must be bytes, got {type(raw).__name__}")
    try:
        value = loads(bytes(raw), "proposal arguments")
    except JSONInputError as exc:
        joint = " are " if exc.reason.startswith("not ") else ": "
        raise ProposalError(f"proposal arguments{joint}{exc.reason}") from None
    if not isinstance(value, dict):
        raise ProposalError(f"proposal arguments must be a JSON object, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class ValidationReport:
    """``errors``: (JSON path, message) pairs, empty when the arguments are valid."""

    validator: str
    format_checker: bool
    errors: tuple[tuple[str, str], ...]

    @property
    def valid(self) -> bool:
        return not self.errors


def validate_arguments(spec: ToolSpec, arguments: dict) -> ValidationReport:
    """Check ``arguments`` against ``spec.input_schema`` (formats asserted)."""
    validator = schema_validator(spec.input_schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(e.path), e.message))
    found = tuple(("/" + "/".join(str(p) for p in e.path), e.message) for e in errors)
    return ValidationReport(VALIDATOR_NAME, True, found)
