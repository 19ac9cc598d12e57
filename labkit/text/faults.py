"""The named faults of trace one: each is a change of ``TextTraceConfig``, nothing else.

A fault never patches a module; it is a configuration a real deployment could end up
with (a bad checkpoint, a cache bug, a misordered or misconfigured processor list, a
detokenizer on the wrong codec).  ``labkit trace text --fault NAME`` runs one.

The §7.5 rules say where each should first show:
  * same input IDs, different e04/decode logits  → model or numeric path;
  * same raw logits, different selection state   → processors or tie-break;
  * same tokens, different bytes                 → tokenizer decoder or transport.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from labkit.nn import DecoderFaults
from labkit.text.processors import DEFAULT_ORDER
from labkit.text.runtime import TextTraceConfig, WeightPerturbation

SUSPECT_MODEL = "model/numeric path"
SUSPECT_PROCESSORS = "processors or tie-break"
SUSPECT_DETOKENIZER = "tokenizer decoder or transport"


@dataclass(frozen=True)
class TextFault:
    """name; what is wrong; the component at fault; how the config changes; and where a
    comparison with the golden trace must first fail: (event ID, rule, payload key) and the
    §7.5 suspect.  Rules: "tensors", "discrete" (as in labkit.trace.divergence)."""

    name: str
    description: str
    component: str
    change: Callable[[TextTraceConfig], TextTraceConfig]
    first_divergence: tuple[str, str, str]
    suspect: str

    def apply(self, config: TextTraceConfig | None = None) -> TextTraceConfig:
        return self.change(config or TextTraceConfig())


def _sampling(**changes) -> Callable[[TextTraceConfig], TextTraceConfig]:
    return lambda cfg: replace(cfg, sampling=replace(cfg.sampling, **changes))


def _decoder(name: str) -> Callable[[TextTraceConfig], TextTraceConfig]:
    return lambda cfg: replace(cfg, decoder_faults=DecoderFaults.named(name))


_MISORDERED = ("grammar_mask", "repetition_transforms", "temperature_disabled", "truncation_disabled",
               "minimum_length_eos_mask", "control_token_mask")

FAULTS: dict[str, TextFault] = {f.name: f for f in (
    TextFault(
        "perturbed_weight",
        "one entry of layer 0's value projection is off by +0.5 (a corrupted checkpoint)",
        "model",
        lambda cfg: replace(cfg, weight_perturbation=WeightPerturbation("layers.0.v", (2, 1), 0.5)),
        ("e04", "tensors", "raw_logits"), SUSPECT_MODEL,
    ),
    TextFault(
        "reset_rope_position",
        "decode steps rotate q and k as if at position 0 (prefill is right)",
        "model",
        _decoder("reset_rope_position"),
        ("e08", "tensors", "raw_logits"), SUSPECT_MODEL,
    ),
    TextFault(
        "copy_layer0_cache_to_layer1",
        "after each decode, layer 1's cache is overwritten by layer 0's",
        "model",
        _decoder("copy_layer0_cache_to_layer1"),
        ("e12", "tensors", "raw_logits"), SUSPECT_MODEL,
    ),
    TextFault(
        "wrong_processor_order",
        "the masks run last, after the transforms: " + " → ".join(_MISORDERED),
        "processors",
        _sampling(processor_order=_MISORDERED),
        ("e05", "discrete", "processor_order"), SUSPECT_PROCESSORS,
    ),
    TextFault(
        "eos_before_minimum_length",
        "the minimum-length mask counts the token being chosen, so EOS is allowed at step 1",
        "processors",
        _sampling(eos_mask_counts_pending_token=True),
        ("e05", "discrete", "masked_ids"), SUSPECT_PROCESSORS,
    ),
    TextFault(
        "eos_in_control_mask",
        "the control mask lists 18 (EOS) where it should list 19 (reserved): EOS can never win",
        "processors",
        _sampling(control_ids=(0, 1, 2, 3, 4, 5, 6, 18)),
        ("e05", "discrete", "masked_ids"), SUSPECT_PROCESSORS,
    ),
    TextFault(
        "tie_break_last_index",
        "greedy ties go to the last index instead of the first",
        "processors",
        _sampling(tie_break="last_index"),
        ("e05", "discrete", "tie_break"), SUSPECT_PROCESSORS,
    ),
    TextFault(
        "broken_detokenizer",
        "the detokenizer encodes pieces as GB18030 instead of UTF-8",
        "detokenizer",
        lambda cfg: replace(cfg, detokenizer_encoding="gb18030"),
        ("e06", "discrete", "byte_length"), SUSPECT_DETOKENIZER,
    ),
)}
assert set(_MISORDERED) == set(DEFAULT_ORDER)


def fault_names() -> list[str]:
    return list(FAULTS)


def faulty_config(name: str | None, base: TextTraceConfig | None = None) -> TextTraceConfig:
    """The configuration of fault ``name`` (None or "none" → ``base`` unchanged)."""
    base = base or TextTraceConfig()
    if name in (None, "", "none", "correct"):
        return base
    if name not in FAULTS:
        raise ValueError(f"unknown text fault {name!r}; expected one of {fault_names()} or 'none'")
    return FAULTS[name].apply(base)
