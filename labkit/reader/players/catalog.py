"""The players' registry: name → the module of its exporter, ``static_data(**options)`` (and, when the kernel
computes states outside the data, ``recompute(data, request)``), both returning the data but its name."""

from types import ModuleType

from labkit.reader.players import (
    attention,
    bandwidth_calculator,
    decode,
    divergence,
    dpo_margin,
    fault_modes,
    grammar,
    grpo_group,
    latents,
    mask_editor,
    scenarios,
    scheduler,
    speculative_sampler,
)

PLAYERS: dict[str, ModuleType] = {
    "attention": attention,
    "bandwidth_calculator": bandwidth_calculator,
    "decode": decode,
    "divergence": divergence,
    "dpo_margin": dpo_margin,
    "fault_modes": fault_modes,
    "grammar": grammar,
    "grpo_group": grpo_group,
    "latents": latents,
    "mask_editor": mask_editor,
    "scenarios": scenarios,
    "scheduler": scheduler,
    "speculative_sampler": speculative_sampler,
}


def module_of(name: str) -> ModuleType:
    """The exporter module of player ``name``, or an error naming the players."""
    if name not in PLAYERS:
        raise ValueError(f"unknown player {name!r}; expected one of {list(PLAYERS)}")
    return PLAYERS[name]


def export(name: str, **options) -> dict:
    """Player ``name``'s data: its name (``"player"``) and its exporter's ``static_data(**options)``."""
    return {"player": name, **module_of(name).static_data(**options)}
