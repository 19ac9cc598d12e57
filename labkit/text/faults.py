"""The named faults of trace one: each a change of ``TextTraceConfig`` a real deployment could end up with.

The §7.5 rules say where each should first show:
  * same input IDs, different e04/decode logits  → model or numeric path;
  * same raw logits, different selection state   → processors or tie-break;
  * same tokens, different bytes                 → tokenizer decoder or transport.
"""

from labkit.core import faults as suspects
from labkit.core.faults import Fault, FirstDivergence, catalogue
from labkit.nn import DecoderFaults
from labkit.text.model import WeightPerturbation
from labkit.text.processors import DEFAULT_ORDER

_MISORDERED = (
    "grammar_mask",
    "repetition_transforms",
    "temperature_disabled",
    "truncation_disabled",
    "minimum_length_eos_mask",
    "control_token_mask",
)
assert set(_MISORDERED) == set(DEFAULT_ORDER)

FAULTS = catalogue(
    Fault(
        "perturbed_weight",
        "one entry of layer 0's value projection is off by +0.5 (a corrupted checkpoint)",
        {"weight_perturbation": WeightPerturbation("layers.0.v", (2, 1), 0.5)},
        FirstDivergence("e04", "tensors", "tensors.raw_logits", suspects.MODEL_PATH),
    ),
    Fault(
        "reset_rope_position",
        "decode steps rotate q and k as if at position 0 (prefill is right)",
        {"decoder_faults": DecoderFaults(reset_rope_position=True)},
        FirstDivergence("e08", "tensors", "tensors.raw_logits", suspects.MODEL_PATH),
    ),
    Fault(
        "copy_layer0_cache_to_layer1",
        "after each decode, layer 1's cache is overwritten by layer 0's",
        {"decoder_faults": DecoderFaults(copy_layer0_cache_to_layer1=True)},
        FirstDivergence("e12", "tensors", "tensors.raw_logits", suspects.MODEL_PATH),
    ),
    Fault(
        "wrong_processor_order",
        "the masks run last, after the transforms: " + " → ".join(_MISORDERED),
        {"sampling": {"processor_order": _MISORDERED}},
        FirstDivergence("e05", "discrete_state", "processor_order", suspects.PROCESSORS),
    ),
    Fault(
        "eos_before_minimum_length",
        "the minimum-length mask counts the token being chosen, so EOS is allowed at step 1",
        {"eos_mask_counts_pending_token": True},
        FirstDivergence("e05", "discrete_state", "masked_ids", suspects.PROCESSORS),
    ),
    Fault(
        "eos_in_control_mask",
        "the control mask lists 18 (EOS) where it should list 19 (reserved): EOS can never win",
        {"sampling": {"control_ids": (0, 1, 2, 3, 4, 5, 6, 18)}},
        FirstDivergence("e05", "discrete_state", "masked_ids", suspects.PROCESSORS),
    ),
    Fault(
        "tie_break_last_index",
        "greedy ties go to the last index instead of the first",
        {"sampling": {"tie_break": "last_index"}},
        FirstDivergence("e05", "discrete_state", "tie_break", suspects.PROCESSORS),
    ),
    Fault(
        "broken_detokenizer",
        "the detokenizer encodes pieces as GB18030 instead of UTF-8",
        {"detokenizer_encoding": "gb18030"},
        FirstDivergence("e06", "discrete_state", "utf8_hex", suspects.DETOKENIZER),
    ),
)
