"""One vocabulary for faults and divergences, shared by the three traces.

A named fault is a change of a runtime's configuration and the ``FirstDivergence`` (event ID, rule,
field, suspect) a comparison with the golden trace must find; the rule names and suspects are
spelled once, here, so a declaration and a diagnosis compare with ``==``.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

#: the six comparisons of §7.17, in the order the algorithm makes them
RULES = ("event_type_and_parent", "artifact_ids", "discrete_state", "tensors", "rng_counter", "external_commit")

# -- suspects: the component a diagnosis names (the §7.5 rules for text) ------------------
# trace one (text)
TEMPLATE_OR_TOKENIZER = "template or tokenizer"
TEMPLATE = "template"
MODEL_PATH = "model / numeric path (weights, RoPE positions, attention mask, KV cache)"
DECODE_SCHEDULING = "decode scheduling (position / cache length)"
KV_CACHE_BOOKKEEPING = "KV cache bookkeeping"
PROCESSORS = "logits processors or tie-break"
DETOKENIZER = "tokenizer decoder (detokenizer) or transport"
STOP_CONDITIONS = "stop conditions (EOS / minimum length / max tokens)"
TEXT_ARTIFACTS = "artifact versions (model, tokenizer or template ID)"
CLIENT_DISCONNECT = "request lifecycle (the client disconnected: abort and release)"
# trace two (diffusion)
TEXT_ENCODER = "text encoder or prompt tokenizer"
CONDITIONS = "prompt tokenizer, negative prompt or CFG batch order"
PRNG_KEY_MAPPING = "PRNG key/counter mapping (seed → Philox)"
PRNG_OR_NORMAL = "PRNG or normal transform (Philox, Box–Muller)"
SCHEDULE_CONFIGURATION = "scheduler timesteps or guidance configuration"
DENOISE_UPDATE = "denoiser, CFG combination or DDIM step"
SAMPLER_NOISE = "the sampler drew noise (eta > 0)"
VAE_DECODE = "VAE decoder or its scaling factor"
PNG_POSTPROCESS = "pixel post-processing or PNG encoder"
DIFFUSION_ARTIFACTS = "artifact versions (text encoder, denoiser, VAE or sampler)"
DDIM_SCHEDULER = "DDIM scheduler"
VAE_DECODER = "VAE decoder"
CFG_BATCH_ORDER = "CFG batch order (negative must come first)"
TIMESTEP_SPACING = "scheduler timesteps (leading vs trailing spacing)"
SAMPLER_ETA = "sampler eta (eta > 0 draws fresh noise)"
SEED_MAPPING = "seed → PRNG key mapping"
PRNG_COUNTER = "PRNG counter or normal transform (Philox, Box–Muller)"
VAE_SCALING = "VAE scaling factor"
PNG_ENCODER = "PNG encoder (metadata, timestamps or settings)"
# trace three (tool call)
PROPOSAL_DECODING = "proposal decoding (grammar mask or model)"
SCHEMA_VALIDATION = "schema validation"
NORMALISER = "normaliser (clock or timezone)"
AUTHORISATION = "authorisation (subject, capability, scope)"
CONFIRMATION_BINDING = "confirmation binding (invocation digest)"
COMMIT_BOUNDARY = "execution / idempotency (commit boundary)"
EXTERNAL_SERVICE = "external service and the commit boundary (retries, idempotency key)"
REQUEST_LIFECYCLE = "request lifecycle (cancellation after the commit boundary)"
ARGUMENTS_PAST_GRAMMAR = "the arguments handed to validation (a field outside the ToolSpec, added after the grammar)"
PROPOSAL_BYTES_CUT = "the proposal bytes between decoder and parser (cut short)"
RUNTIME_CRASH = "the runtime process crashed mid-execution (recovery must resolve it from the journal)"
TOOL_ARTIFACTS = "artifact versions (model, template, tokenizer or tool version)"


@dataclass(frozen=True)
class FirstDivergence:
    """Where two traces first differ: the event ID (of the second trace), the rule that failed, the payload field
    (dotted path) and the suspect.  A fault's declaration may give a leading part of the reported field
    (``"tensors.raw_logits"`` covers ``"tensors.raw_logits.summary.min"``) or ``None``."""

    event_id: str
    rule: str
    field: str | None
    suspect: str

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {self.rule!r}")

    def matches(self, found: "FirstDivergence") -> bool:
        """Does the divergence ``found`` happen where this one is declared?"""
        # the declared field is the reported path or a leading part of it, ending where a part ends
        field_ok = self.field is None or re.match(rf"{re.escape(self.field)}($|[.\[ ])", found.field or "") is not None
        return (found.event_id, found.rule, found.suspect) == (self.event_id, self.rule, self.suspect) and field_ok

    def __str__(self) -> str:
        return f"{self.event_id} ({self.rule}: {self.field or '*'}) → suspect {self.suspect}"


@dataclass(frozen=True)
class Fault:
    """One named fault: what goes wrong, the configuration change that makes it happen
    (field → value, given to the runtime config's ``replace``) and its first divergence."""

    name: str
    description: str
    changes: Mapping[str, Any]
    expected: FirstDivergence

    def __post_init__(self):
        object.__setattr__(self, "changes", MappingProxyType(dict(self.changes)))


def catalogue(*faults: Fault) -> Mapping[str, Fault]:
    """Name → fault, in declaration order, read-only (a reader's edit cannot change the book's
    runs); a name given twice is refused."""
    table: dict[str, Fault] = {}
    for fault in faults:
        if fault.name in table:
            raise ValueError(f"fault {fault.name!r} is declared twice")
        table[fault.name] = fault
    return MappingProxyType(table)


def configure(faults: Mapping[str, Fault], kind: str, name: str | None, base):
    """``base`` with fault ``name`` of a ``kind``'s catalogue applied (``None``: ``base`` unchanged);
    an unknown name is a ValueError listing the names."""
    if name is not None and name not in faults:
        raise ValueError(f"unknown {kind} fault {name!r}: fault must be one of {list(faults)}")
    return base if name is None else base.replace(**faults[name].changes)
