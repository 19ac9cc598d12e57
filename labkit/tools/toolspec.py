"""The ToolSpec of §7.10, ``calendar.create_event@v1`` (``fixtures/tools/toolspec.json``), the checks every
ToolSpec passes, and the proposal's argument bytes parsed (t02, strict JSON) and validated (t03).

Validation asserts formats (``2026-02-30`` fails ``format: date``, not merely annotated) and ``pattern``
follows ECMA-262 as JSON Schema says: ``"09:00\n"`` does not match ``^…$``.
"""

from dataclasses import asdict, dataclass

from labkit.core.strictjson import JSONInputError, import_jsonschema, loads, schema_validator

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
SIDE_EFFECT_CLASSES = ("read", "write")
VALIDATOR_NAME = "Draft 2020-12"


@dataclass(frozen=True)
class ToolSpec:
    """A checked ToolSpec: ``ref`` is ``name@version`` (e.g. calendar.create_event@v1)."""

    name: str
    version: str
    side_effect_class: str
    input_schema: dict

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def to_json(self) -> dict:
        return asdict(self)


def check_toolspec(spec: dict) -> ToolSpec:
    """Validate a ToolSpec dict; raise ``ValueError`` naming the field that is wrong."""
    if not isinstance(spec, dict):
        raise ValueError(f"a ToolSpec must be a JSON object, got {type(spec).__name__}")
    for key in ("name", "version", "side_effect_class", "input_schema"):
        if key not in spec:
            raise ValueError(f"ToolSpec lacks the field {key!r}")
    for key in ("name", "version"):
        if not isinstance(spec[key], str) or not spec[key]:
            raise ValueError(f"ToolSpec field {key!r} must be a non-empty string, got {spec[key]!r}")
    if spec["side_effect_class"] not in SIDE_EFFECT_CLASSES:
        raise ValueError(
            f"ToolSpec field 'side_effect_class' must be one of {list(SIDE_EFFECT_CLASSES)}, "
            f"got {spec['side_effect_class']!r}"
        )
    schema = spec["input_schema"]
    if not isinstance(schema, dict):
        raise ValueError(f"ToolSpec field 'input_schema' must be an object, got {type(schema).__name__}")
    if schema.get("$schema") != DRAFT_2020_12:
        raise ValueError(f"ToolSpec input_schema.$schema must be {DRAFT_2020_12!r}, got {schema.get('$schema')!r}")
    try:
        schema_validator(schema)  # checked against the metaschema once; validate_arguments reuses it
    except import_jsonschema().SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        raise ValueError(f"ToolSpec input_schema is not valid Draft 2020-12 at {where}: {exc.message}") from None
    return ToolSpec(spec["name"], spec["version"], spec["side_effect_class"], schema)


def find_tool(spec: ToolSpec, ref: str) -> ToolSpec:
    """``spec``, the one tool offered, if ``ref`` (``name@version``) names it; another name or version is an error."""
    if not isinstance(ref, str) or "@" not in ref:
        raise ValueError(f"a tool reference must look like 'name@version', got {ref!r}")
    name, version = ref.split("@", 1)
    if spec.name == name and spec.version != version:
        raise ValueError(f"tool {name!r} has no version {version!r}; offered versions: {[spec.version]}")
    if spec.ref != ref:
        raise ValueError(f"unknown tool {ref!r}; offered: {[spec.ref]}")
    return spec


def load_toolspec() -> ToolSpec:
    """Read and check the stored ToolSpec, ``fixtures/tools/toolspec.json``."""
    from labkit.core.fixtures import fixtures_root, read_json

    return check_toolspec(read_json(fixtures_root() / "tools" / "toolspec.json"))


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


def validate_arguments(spec: ToolSpec, arguments: dict) -> tuple[tuple[str, str], ...]:
    """Check ``arguments`` against ``spec.input_schema`` (Draft 2020-12, formats asserted): the errors
    as (JSON path, message) pairs, none when the arguments are valid."""
    validator = schema_validator(spec.input_schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(e.path), e.message))
    return tuple(("/" + "/".join(str(p) for p in e.path), e.message) for e in errors)
