"""chat-template-v1: the synthetic chat template of trace one (stored in fixtures/text/template.json).

    <bos><system>{system}</system><user>{user}</user><assistant>

The rendered text ends with the open assistant tag, so the model's first selected token
is the first token of the answer.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Self

from labkit.core.fixtures import fixture_dir, read_json


@dataclass(frozen=True)
class Template:
    template_id: str
    layout: str

    @classmethod
    def load(cls, root: str | Path | None = None) -> Self:
        data = read_json(fixture_dir("text", root) / "template.json")
        try:
            return cls(data["template_id"], data["layout"])
        except KeyError as exc:
            raise ValueError(f"template file lacks the field {exc}") from None

    def render(self, system: str, user: str) -> str:
        """Fill the layout; refuse messages that contain tag delimiters."""
        for name, value in (("system", system), ("user", user)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
            if "<" in value or ">" in value:
                raise ValueError(f"{name} must not contain '<' or '>' (they delimit template tags), got {value!r}")
        return self.layout.format(system=system, user=user)
