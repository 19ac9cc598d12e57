"""The logits processors of trace one and greedy selection.

Every processor is ``processor(logits [V], context: ProcessorContext) -> logits [V]`` and returns a new
array: a mask writes −∞ where a token is forbidden, a disabled transform returns its input.  §7.2's order:

    control_token_mask → minimum_length_eos_mask → grammar_mask
    → repetition_transforms → temperature_disabled → truncation_disabled

then greedy takes the first index of the maximum (a documented tie-break).  A transform stage is listed as
``temperature`` when configured and as ``temperature_disabled`` when off, as the chapter lists greedy's.
"""

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from labkit.core.guards import is_integer, real_array, real_number, token_ids

DEFAULT_ORDER = (
    "control_token_mask",
    "minimum_length_eos_mask",
    "grammar_mask",
    "repetition_transforms",
    "temperature_disabled",
    "truncation_disabled",
)
DISABLED = "_disabled"


def stage_of(name: str) -> str:
    """The processor a ``processor_order`` entry runs: ``temperature_disabled`` → ``temperature``."""
    return name[: -len(DISABLED)] if name.endswith(DISABLED) else name


TIE_BREAKS = ("first_index", "last_index")


@dataclass(frozen=True)
class SamplingConfig:
    """What the processors and the selector are told (§7.2 values as defaults).  control_ids: tokens never
    emitted; EOS is masked until minimum_output_tokens were selected; grammar_allowed None: no grammar;
    repetition_penalty 1, frequency/presence_penalty 0, temperature/top_k/top_p None: off."""

    processor_order: tuple[str, ...] | None = None  # None: DEFAULT_ORDER, named by the config
    control_ids: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6, 19)
    eos_id: int = 18
    minimum_output_tokens: int = 1
    grammar_allowed: tuple[int, ...] | None = None
    repetition_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    temperature: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    tie_break: str = "first_index"

    def __post_init__(self):
        on = {"temperature": self.temperature is not None, "truncation": (self.top_k, self.top_p) != (None, None)}
        if self.processor_order is None:
            named = tuple(stage_of(n) if on.get(stage_of(n)) else n for n in DEFAULT_ORDER)
            object.__setattr__(self, "processor_order", named)
        if unknown := [name for name in self.processor_order if stage_of(name) not in PROCESSORS]:
            raise ValueError(
                f"processor_order names unknown processor {unknown[0]!r}; expected names from {list(DEFAULT_ORDER)}"
            )
        if sorted(map(stage_of, self.processor_order)) != sorted(map(stage_of, DEFAULT_ORDER)):
            raise ValueError(
                f"processor_order must list each of {list(DEFAULT_ORDER)} exactly once, "
                f"got {list(self.processor_order)}"
            )
        for name in self.processor_order:
            stage = stage_of(name)
            if stage in on and on[stage] == name.endswith(DISABLED):
                state, wanted = ("configured", stage) if on[stage] else ("off", stage + DISABLED)
                raise ValueError(f"processor_order lists {name!r} but {stage} is {state}; name it {wanted!r}")
        self._check_ids_and_numbers()
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {self.tie_break!r}")

    def _check_ids_and_numbers(self):
        """IDs are non-negative integers (−1 would mask the last token); counts integers; numbers
        finite reals in their ranges (a switched-off stage is None)."""
        ids = {"control_ids": self.control_ids, "eos_id": (self.eos_id,), "grammar_allowed": self.grammar_allowed}
        for name, values in ids.items():
            if values is not None and not all(is_integer(i) and i >= 0 for i in values):
                raise ValueError(f"{name} must be non-negative integer token IDs, got {values!r}")
        for name, low, off in (("minimum_output_tokens", 0, ""), ("top_k", 1, " or None (disabled)")):
            value = getattr(self, name)
            if value is not None and not (is_integer(value) and value >= low):
                raise ValueError(f"{name} must be an integer >= {low}{off}, got {value!r}")
        real_number("repetition_penalty", self.repetition_penalty, 0.0, open_low=True)
        real_number("frequency_penalty", self.frequency_penalty)
        real_number("presence_penalty", self.presence_penalty)
        if self.temperature is not None:
            real_number("temperature", self.temperature, 0.0, open_low=True, expected="> 0 or None (disabled)")
        if self.top_p is not None:
            real_number("top_p", self.top_p, 0.0, 1.0, open_low=True, expected="in (0, 1] or None (disabled)")


@dataclass(frozen=True)
class ProcessorContext:
    """The state a processor may read: the configuration, the IDs selected so far and how many
    tokens the request counts as selected (the runtime says; None: ``len(selected_so_far)``)."""

    config: SamplingConfig
    selected_so_far: tuple[int, ...] = field(default_factory=tuple)
    counted: int | None = None

    def __post_init__(self):
        if self.counted is None:
            object.__setattr__(self, "counted", len(self.selected_so_far))
        if not (is_integer(self.counted) and self.counted >= 0):
            raise ValueError(f"counted must be an integer >= 0 (tokens selected), got {self.counted!r}")


def control_token_mask(logits: np.ndarray, context: ProcessorContext) -> np.ndarray:
    """logits[c] = −∞ for every control ID c."""
    out = real_array("logits", logits, finite=False).copy()  # an integer row cannot hold −∞
    out[token_ids("control_ids", context.config.control_ids, logits.size)] = -np.inf
    return out


def minimum_length_eos_mask(logits: np.ndarray, context: ProcessorContext) -> np.ndarray:
    """logits[EOS] = −∞ while n_selected < minimum_output_tokens."""
    cfg = context.config
    out = logits.copy()
    if context.counted < cfg.minimum_output_tokens:
        out[token_ids("eos_id", cfg.eos_id, logits.size)] = -np.inf
    return out


def grammar_mask(logits: np.ndarray, context: ProcessorContext) -> np.ndarray:
    """logits[i] = −∞ for i outside the grammar's allowed set; no grammar → unchanged."""
    allowed = context.config.grammar_allowed
    if allowed is None:
        return logits.copy()
    out = np.full_like(logits, -np.inf)
    allowed = token_ids("grammar_allowed", allowed, logits.size)
    out[allowed] = logits[allowed]
    return out


def repetition_transforms(logits: np.ndarray, context: ProcessorContext) -> np.ndarray:
    """For each already selected token i seen c_i times:

    z_i ← z_i / r if z_i > 0 else z_i · r          (repetition penalty r)
    z_i ← z_i − c_i·α_freq − [c_i > 0]·α_presence   (frequency, presence)
    """
    cfg = context.config
    out = logits.copy()
    token_ids("selected_so_far", context.selected_so_far, logits.size)
    for token, count in Counter(context.selected_so_far).items():
        z = out[token]
        if np.isfinite(z):
            z = z / cfg.repetition_penalty if z > 0 else z * cfg.repetition_penalty
            out[token] = z - count * cfg.frequency_penalty - cfg.presence_penalty
    return out


def temperature(logits: np.ndarray, context: ProcessorContext) -> np.ndarray:
    """z ← z / T; disabled (None) → unchanged."""
    t = context.config.temperature
    return logits.copy() if t is None else logits / np.asarray(t, dtype=logits.dtype)


def truncation(logits: np.ndarray, context: ProcessorContext) -> np.ndarray:
    """top-k keeps the k largest; top-p keeps the smallest prefix (by probability) with mass ≥ p."""
    cfg = context.config
    out = logits.copy()
    if cfg.top_k is not None and cfg.top_k < out.size:
        kth = np.sort(out)[-cfg.top_k]
        out[out < kth] = -np.inf
    if cfg.top_p is not None and cfg.top_p < 1:
        order = np.argsort(-out, kind="stable")
        finite = out[order] - np.max(out)
        probs = np.exp(finite) / np.sum(np.exp(finite))
        keep = np.cumsum(probs) - probs < cfg.top_p  # mass before i is still < p
        out[order[~keep]] = -np.inf
    return out


#: the names configs and traces use (not the functions' own names)
PROCESSORS = {
    "control_token_mask": control_token_mask,
    "minimum_length_eos_mask": minimum_length_eos_mask,
    "grammar_mask": grammar_mask,
    "repetition_transforms": repetition_transforms,
    "temperature": temperature,
    "truncation": truncation,
}


def resolve_processors(overrides: Mapping[str, Callable] | None = None) -> dict[str, Callable]:
    """The processor table with some entries (name → function of the same signature) replaced; the
    configured order still decides when each runs."""
    table = dict(PROCESSORS)
    for name, fn in (overrides or {}).items():
        if name not in PROCESSORS:
            raise ValueError(
                f"processors overrides a processor named {name!r}; expected names from {sorted(PROCESSORS)}"
            )
        if not callable(fn):
            raise ValueError(
                f"processors[{name!r}] must be a function (logits, context) -> logits, got {type(fn).__name__}"
            )
        table[name] = fn
    return table


def apply_processors(
    raw_logits: np.ndarray, context: ProcessorContext, processors: Mapping[str, Callable] | None = None
) -> np.ndarray:
    """Run the configured order on raw logits [V]; returns processed logits [V].

    ``processors`` optionally replaces some processors by name (see ``resolve_processors``).
    """
    raw_logits = real_array("raw_logits", raw_logits)
    if raw_logits.ndim != 1:
        raise ValueError(f"raw_logits must be one row [V], got shape {list(raw_logits.shape)}")
    table = resolve_processors(processors)
    out = raw_logits
    for name in context.config.processor_order:  # temperature_disabled runs temperature: off, it is the identity
        out = table[stage_of(name)](out, context)
    return out


def greedy_select(processed_logits: np.ndarray, tie_break: str = "first_index") -> int:
    """argmax over processed logits [V]; ties go to the first (or, configured, last) index."""
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
    z = real_array("processed_logits", processed_logits, finite=False)
    if np.isnan(z).any() or np.isposinf(z).any():
        raise ValueError(
            f"processed_logits must be finite or -inf, got NaN or +inf at {np.flatnonzero(~(z < np.inf))[:5]}"
        )
    if not np.any(np.isfinite(z)):
        raise ValueError("every token is masked: the processors left nothing to select")
    best = np.flatnonzero(z == np.max(z))
    return int(best[0] if tie_break == "first_index" else best[-1])
