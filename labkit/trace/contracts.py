"""What each kind of trace promises: the state/update/terminal contract of §7.16.

Traces of different kinds are never compared step by step ("is step 10 the same?");
each is checked against its own contract.  The table of §7.16 is generated from these
declarations, and ``labkit.trace.divergence`` reads each contract's tolerance and suspects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from labkit.core import faults as S  # the suspects, spelled once
from labkit.core.faults import RULES

#: the §7.16 table, a row a question: attribute → (question, text, diffusion and tool answers)
STATE_TABLE = {
    "initial_object": (
        "Initial fixed object",
        "12 prompt token IDs",
        "condition tensors + initial noise",
        "messages + ToolSpec + subject",
    ),
    "model_state": (
        "Model state",
        "residual stream, per-layer KV cache, next-token logits",
        "the whole latent and the current timestep",
        "each of the two model calls has its own cache and logits",
    ),
    "runtime_update": (
        "Runtime update",
        "ordered logits processors, greedy selection, stop check",
        "classifier-free guidance, DDIM scheduler step",
        "parse, validate, authorize, execute",
    ),
    "irreversible_point": (
        "Irreversible point",
        "bytes already streamed are usually not taken back",
        "publishing the final file (defined by the application)",
        "the external commit (t09)",
    ),
    "random_entry": (
        "Where randomness enters",
        "none: this fixture decodes greedily",
        "the initial latent (seed, Philox counter, Box–Muller)",
        "none in decoding; the external service creates the event ID",
    ),
    "termination": (
        "Termination",
        "EOS selected (or max_output_tokens)",
        "the timestep schedule is exhausted",
        "second model call reaches EOS after the tool result is observed",
    ),
    "replay_core": (
        "Replay core",
        "token IDs and the event sequence",
        "tensor shapes, the schedule, the RNG key and counter",
        "the Invocation, the idempotency key and the commit status",
    ),
}
#: rows of the §7.16 table: (attribute, question it answers)
CONTRACT_ROWS = tuple((attr, row[0]) for attr, row in STATE_TABLE.items())
_COLUMNS = ("text", "diffusion", "tool")


def _answers(kind: str) -> dict[str, str]:
    """The column of ``kind`` in the §7.16 table: attribute → its answer."""
    column = 1 + _COLUMNS.index(kind)
    return {attr: row[column] for attr, row in STATE_TABLE.items()}


@dataclass(frozen=True)
class TraceContract:
    kind: str
    title: str
    event_prefix: str
    initial_object: str
    model_state: str
    runtime_update: str
    irreversible_point: str
    random_entry: str
    termination: str
    replay_core: str
    #: what "output" means for this kind (§7.16's closing remark)
    output_means: str
    #: where an event's tensors are compared (diffusion events say so per tensor)
    comparison_level: str
    #: tensors are compared with this absolute tolerance on their summaries and values
    #: (payloads round floats to 4 decimals, so the tolerance is one step coarser)
    tensor_atol: float = 1e-3
    #: (event_type, rule) → suspect component; "*" matches any event type
    suspects: dict[tuple[str, str], str] = field(default_factory=dict)
    #: component → suspect, when no (event_type, rule) entry matches
    component_suspects: dict[str, str] = field(default_factory=dict)
    #: payload field (prefix) → suspect; the most specific evidence, checked first
    field_suspects: dict[str, str] = field(default_factory=dict)
    #: events where a decision is taken from tensors carried in the same event: if those
    #: tensors differ too, the decision is not to blame (§7.5: same raw logits, other choice)
    decision_events: tuple[str, ...] = ()
    #: the event type the other trace took instead (a branch) → suspect
    branch_suspects: dict[str, str] = field(default_factory=dict)

    def suspect(
        self,
        event_type: str,
        component: str,
        rule: str,
        tensors_equal: bool,
        field_name: str = "",
        other_event_type: str | None = None,
    ) -> str:
        """Name the component to inspect first (the diagnosis rules of §7.5 for text)."""
        if rule == "event_type_and_parent" and other_event_type in self.branch_suspects:
            return self.branch_suspects[other_event_type]
        if rule == "discrete_state" and not tensors_equal and event_type in self.decision_events:
            # the numbers feeding this decision already differ: look upstream of it
            key = (event_type, "tensors")
            if key in self.suspects:
                return self.suspects[key]
        for prefix, suspect in self.field_suspects.items():
            if field_name.startswith(prefix):
                return suspect
        for key in ((event_type, rule), ("*", rule)):
            if key in self.suspects:
                return self.suspects[key]
        return self.component_suspects.get(component, f"the {component} component")

    def __post_init__(self):
        for event_type, rule in self.suspects:
            if rule not in RULES:
                raise ValueError(f"{self.kind} contract: rule {rule!r} of {event_type!r} must be one of {RULES}")


TEXT = TraceContract(
    kind="text",
    title="Text trace",
    event_prefix="e",
    **_answers("text"),
    output_means="incremental text",
    comparison_level="logits",
    suspects={
        ("input.tokenized", "discrete_state"): S.TEMPLATE_OR_TOKENIZER,
        ("context.rendered", "discrete_state"): S.TEMPLATE,
        ("prefill.completed", "tensors"): S.MODEL_PATH,
        ("decode.completed", "tensors"): S.MODEL_PATH,
        ("decode.started", "discrete_state"): S.DECODE_SCHEDULING,
        ("decode.completed", "discrete_state"): S.KV_CACHE_BOOKKEEPING,
        ("token.selected", "tensors"): S.MODEL_PATH,
        ("token.selected", "discrete_state"): S.PROCESSORS,
        ("stream.delta", "discrete_state"): S.DETOKENIZER,
        ("generation.draining", "discrete_state"): S.STOP_CONDITIONS,
        ("*", "artifact_ids"): S.TEXT_ARTIFACTS,
    },
    component_suspects={"transport": S.DETOKENIZER, "decoder": S.PROCESSORS, "model": S.MODEL_PATH},
    decision_events=("token.selected",),
)

DIFFUSION = TraceContract(
    kind="diffusion",
    title="Diffusion trace",
    event_prefix="d",
    **_answers("diffusion"),
    output_means="one whole media object",
    comparison_level="latent, pixel or PNG bytes (declared per tensor)",
    suspects={
        ("condition.encoded", "tensors"): S.TEXT_ENCODER,
        ("condition.encoded", "discrete_state"): S.CONDITIONS,
        ("latent.initialized", "rng_counter"): S.PRNG_KEY_MAPPING,
        ("latent.initialized", "tensors"): S.PRNG_OR_NORMAL,
        ("denoise.updated", "discrete_state"): S.SCHEDULE_CONFIGURATION,
        ("denoise.updated", "tensors"): S.DENOISE_UPDATE,
        ("denoise.updated", "rng_counter"): S.SAMPLER_NOISE,
        ("vae.decoded", "tensors"): S.VAE_DECODE,
        ("image.encoded", "tensors"): S.PNG_POSTPROCESS,
        ("image.encoded", "discrete_state"): S.PNG_POSTPROCESS,
        ("*", "artifact_ids"): S.DIFFUSION_ARTIFACTS,
    },
    component_suspects={"scheduler": S.DDIM_SCHEDULER, "sampler": S.DDIM_SCHEDULER, "vae": S.VAE_DECODER},
    field_suspects={
        "cfg_batch_order": S.CFG_BATCH_ORDER,
        "scheduler.timesteps": S.TIMESTEP_SPACING,
        "scheduler.eta": S.SAMPLER_ETA,
        "seed": S.SEED_MAPPING,
        "tensors.z_": S.PRNG_COUNTER,
        "latent_scaling": S.VAE_SCALING,
        "tensors.png": S.PNG_ENCODER,
    },
)

TOOL = TraceContract(
    kind="tool",
    title="Tool trace",
    event_prefix="t",
    **_answers("tool"),
    output_means="natural language written after an external result",
    comparison_level="logits",
    suspects={
        ("proposal.generated", "discrete_state"): S.PROPOSAL_DECODING,
        ("proposal.generated", "tensors"): S.MODEL_PATH,
        ("schema.validated", "discrete_state"): S.SCHEMA_VALIDATION,
        ("invocation.normalized", "discrete_state"): S.NORMALISER,
        ("authorization.allowed", "discrete_state"): S.AUTHORISATION,
        ("confirmation.requested", "discrete_state"): S.CONFIRMATION_BINDING,
        ("confirmation.approved", "discrete_state"): S.CONFIRMATION_BINDING,
        ("*", "external_commit"): S.COMMIT_BOUNDARY,
        ("*", "artifact_ids"): S.TOOL_ARTIFACTS,
    },
    component_suspects={
        "executor": S.COMMIT_BOUNDARY,
        "validator": S.SCHEMA_VALIDATION,
        "confirmation": S.CONFIRMATION_BINDING,
        "authorizer": S.AUTHORISATION,
        "calendar service": S.EXTERNAL_SERVICE,
        "runtime": S.REQUEST_LIFECYCLE,
        "decoder": S.PROPOSAL_DECODING,
    },
    decision_events=("proposal.generated",),
    branch_suspects={
        "schema.rejected": S.ARGUMENTS_PAST_GRAMMAR,
        "proposal.rejected": S.PROPOSAL_BYTES_CUT,
        "runtime.crashed": S.RUNTIME_CRASH,
    },
)

CONTRACTS: dict[str, TraceContract] = {c.kind: c for c in (TEXT, DIFFUSION, TOOL)}
_BY_PREFIX = {c.event_prefix: c for c in CONTRACTS.values()}


def contract_for(events: list[dict]) -> TraceContract:
    """The contract of a trace, recognised by its event-ID prefix."""
    if not events:
        raise ValueError("an empty trace has no kind")
    prefix = events[0]["event_id"][0]
    if prefix not in _BY_PREFIX:
        raise ValueError(
            f"event IDs starting with {prefix!r} belong to no known trace kind (expected one of {sorted(_BY_PREFIX)})"
        )
    return _BY_PREFIX[prefix]


def state_rows() -> tuple[list[str], list[list[str]]]:
    """The §7.16 comparison, generated from the three contracts: (headers, rows).
    ``labkit.reader.tables.state_table()`` shows it as a table."""
    kinds = list(CONTRACTS.values())
    rows = [[question] + [getattr(c, attr) for c in kinds] for attr, question in CONTRACT_ROWS]
    rows.append(["What “output” means"] + [c.output_means for c in kinds])
    return ["question"] + [c.title for c in kinds], rows
