"""The one shape of the three trace runtimes (CONTRIBUTING.md, "A trace"): a frozen ``Config``, a frozen ``Hooks``,
a mutable run (the state its steps share: ``config``, the recorder ``rec``, ``events``), an ordered tuple of steps
``step(run) -> None | status`` and ``run_steps``, the one loop that drives them.
"""

import dataclasses
from typing import Any


class Config:
    """Base of the runtimes' frozen configuration dataclasses."""

    def replace(self, **changes: Any):
        """A copy with ``changes`` (field → value).  For a field that holds a dataclass, a
        dict value changes only the named fields of that dataclass
        (``config.replace(sampling={"tie_break": "last_index"})``)."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(f"{type(self).__name__} has no field {unknown[0]!r}; expected one of {sorted(names)}")
        for name, value in changes.items():
            current = getattr(self, name)
            if isinstance(value, dict) and dataclasses.is_dataclass(current):
                changes[name] = dataclasses.replace(current, **value)
        return dataclasses.replace(self, **changes)


def hook(signature: str):
    """A field of a ``Hooks`` dataclass, ``None`` by default, and what its function takes and returns,
    written once (``hook("a function (word) -> word")``): a wrong value is refused quoting it."""
    return dataclasses.field(default=None, metadata={"signature": signature})


class Hooks:
    """Base of the runtimes' frozen hook dataclasses: every field, declared with ``hook(signature)``, is ``None``
    (the library's piece) or a function."""

    def __post_init__(self):
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is not None and not self._acceptable(item.name, value):
                raise ValueError(
                    f"hooks.{item.name} must be {item.metadata.get('signature', 'a function')} "
                    f"or None, got {type(value).__name__}"
                )

    def _acceptable(self, name: str, value: Any) -> bool:
        return callable(value)


def run_steps(steps, run) -> str | None:
    """Each ``step(run)`` in order, until one returns a status (the run ends there); that status, or None."""
    for step in steps:
        if (status := step(run)) is not None:
            return status
    return None


def checked_run_arguments(config, hooks, config_type: type, hooks_type: type) -> tuple:
    """(config, hooks) of a run: ``None`` → the defaults; a value of another type is refused
    with a ``ValueError`` naming the argument (the one exception type for a bad config or hook)."""
    config = config_type() if config is None else config
    hooks = hooks_type() if hooks is None else hooks
    for name, value, wanted in (("config", config, config_type), ("hooks", hooks, hooks_type)):
        if not isinstance(value, wanted):
            raise ValueError(f"{name} must be a {wanted.__name__}, got {type(value).__name__}")
    return config, hooks
