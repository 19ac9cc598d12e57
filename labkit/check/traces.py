"""The predictions, variants and diagnoses of the preface and chapter 7's pages that need no runtime hook.

Every answer is computed here from the real kernels, fixtures and runtimes at check time — never
typed in — so a change to the kit moves the answer with it.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import function, table, value
from labkit.check.grading import exactly

PREFACE = "notebooks/00-preface.md"
TRACES = "notebooks/07-traces"
FIRST_TOKEN = f"{TRACES}/02-text-request-to-first-token.md"
DENOISING = f"{TRACES}/05-diffusion-denoising-and-decoding.md"

#: the request the cache of page 09's prediction was built for
OTHER_USER_TEXT = "明天上午九点提醒我带护照。"


def _divergence(kind: str, fault: str):
    from labkit.trace import catalogue

    return catalogue.diagnose(kind, fault)


def _event_id(kind: str, fault: str) -> str:
    div = _divergence(kind, fault)
    return (div.event_a or div.event_b)["event_id"]


@value(PREFACE, "predict", tolerance=0.01)
def rms_norm_row() -> float:
    """before running it: what is the first entry of rms_norm([[3, 4, 0, 0]], eps=1e-6)? (±0.01)

    idea: RMSNorm divides a row by the root of the mean of its squares, over all d entries
    rule: the mean runs over the four entries, zeros included; eps is far too small to matter here
    why: the mean square of [3, 4, 0, 0] is 25/4, its root 2.5, so the row becomes [{answer:.2f}, 1.6, 0, 0]
    """
    from labkit.nn import rms_norm

    return float(rms_norm(np.array([[3.0, 4.0, 0.0, 0.0]]), 1e-6)[0, 0])


@value(FIRST_TOKEN, "predict")
def eos_fault_first_event() -> str:
    """the fault eos_before_minimum_length lets EOS through before the minimum length; which event (its
    event ID, e.g. 'e03') is the first to differ from the golden trace?

    idea: a processor fault changes nothing until the step where its rule would have acted
    rule: the logits are the same in both runs; the first event whose content depends on the mask is the
    divergence
    why: {answer} is the first token.selected event: its masked IDs differ, the raw logits do not
    """
    return _event_id("text", "eos_before_minimum_length")


def _min_p_cases():
    rng = np.random.default_rng(29)
    return [
        ("seeded logits [16], min_p = 0.1", (rng.normal(size=16) * 3, 0.1)),
        ("logits in the thousands, min_p = 0.5", (np.array([1000.0, 999.5, 990.0, 1000.0]), 0.5)),
        ("min_p = 1: only the maxima stay", (np.array([2.0, 1.0, 2.0, -1.0]), 1.0)),
        ("a row with −∞ already masked", (np.array([0.0, -np.inf, -0.5, -3.0]), 0.2)),
    ]


@function(FIRST_TOKEN, "extend", _min_p_cases)
def min_p_filter(logits, min_p):
    """a processor the trace does not have: min-p truncation. Return the logits with every token whose
    probability is below min_p × (the largest probability) set to −inf, the others unchanged

    idea: min-p truncation measures each token against the most probable one, not against a fixed mass
    rule: a ratio of probabilities is a difference of logits: no softmax is needed, and none may overflow
    """
    z = np.asarray(logits, dtype=np.float64)
    keep = z - np.max(z) >= np.log(min_p)  # p_i / p_max = exp(z_i − z_max)
    return np.where(keep, z, -np.inf)


@value(f"{TRACES}/03-text-token-by-token.md", "predict")
def eos_in_control_step() -> int:
    """run the fault eos_in_control_mask: at which logical step does the selection first differ? (an integer)

    idea: a mask that hides EOS changes a selection only where EOS would have been the choice or the cut
    rule: the raw logits are identical; the first step whose masked IDs differ is the divergence
    why: step {answer} is the first token.selected whose masked IDs differ; the raw logits still agree
    """
    return int((_divergence("text", "eos_in_control_mask").event_a or {})["logical_step"])


@value(f"{TRACES}/04-diffusion-conditions-and-noise.md", "derive")
def philox_blocks_for_latent() -> int:
    """how many Philox4x32-10 blocks does the initial latent of trace two consume? (an integer)

    idea: a block gives four words, and Box–Muller turns each pair of words into a pair of normals
    rule: count the latent's numbers from its shape, then the normals one block yields
    why: the latent [1, 4, 64, 64] holds 16384 numbers and each block yields 4 normals: {answer} blocks
    """
    from labkit.diffusion import DiffusionConfig
    from labkit.diffusion.normal import blocks_to_normals

    per_block = blocks_to_normals(np.full((1, 4), 7, dtype=np.uint32)).size
    return int(np.prod(DiffusionConfig().latent_shape)) // per_block


@value(f"{TRACES}/04-diffusion-conditions-and-noise.md", "predict")
def counter_offset_first_event() -> str:
    """the fault counter_offset starts the Philox counter elsewhere with the same seed. Which event (its
    event ID) is the first to differ from the golden trace?

    idea: a random stream is named by its key and its counter: the seed alone does not say where it starts
    rule: find the first event that records the drawn numbers or the counter they came from
    why: {answer} records the counter and the latent drawn from it; the seed in its payload is unchanged
    """
    return _event_id("diffusion", "counter_offset")


@value(DENOISING, "derive", tolerance=1e-9)
def cfg_other_convention() -> float:
    """another library writes guidance as ε̂ = ε_c + s·(ε_c − ε_u). Which s gives the same ε̂ as this
    trace's guidance scale?

    idea: both forms are a point on the line through ε_u and ε_c; match the coefficients of ε_c
    rule: expand both forms into a·ε_c + b·ε_u and equate a (b follows)
    why: ε_u + w(ε_c − ε_u) = ε_c + (w − 1)(ε_c − ε_u), so s = w − 1 = {answer:g}
    """
    from labkit.diffusion import DiffusionConfig

    return float(DiffusionConfig().guidance_scale) - 1.0


@value(DENOISING, "predict")
def cfg_scale_one() -> str:
    """with guidance scale 1, the guided ε̂ equals one of the two predictions: 'conditional' or
    'unconditional'?

    idea: the guidance scale says how far along the difference between the conditions the prediction moves
    rule: at w = 1 the move is exactly the difference: the start point cancels
    why: ε_u + 1·(ε_c − ε_u) = ε_c: the {answer} prediction, and guidance has no extra push
    """
    from labkit.diffusion import DiffusionConfig
    from labkit.diffusion.guidance import classifier_free_guidance

    eps = np.random.default_rng(5).normal(size=(2, 4, 8, 8))
    guided = classifier_free_guidance(eps, 1.0)
    row = next(i for i in range(2) if np.allclose(guided[0], eps[i]))
    return "conditional" if DiffusionConfig().cfg_order[row] == "positive" else "unconditional"


@value(f"{TRACES}/06-diffusion-ddim-by-hand.md", "predict", tolerance=0.01)
def x0_fed_as_epsilon() -> list[float]:
    """a model that predicts x₀ is read as if it predicted ε: feed (1.0, −1.0) in place of ε₂ in the step
    2 → 1 of the sub-fixture. What z₁ (two numbers) does the step return? (±0.01 each)

    idea: the step trusts its input to be noise: whatever comes in is subtracted as noise and added back
    rule: x̂₀ = (z − √(1−ᾱ_t)·input)/√ᾱ_t, then z_prev = √ᾱ_prev·x̂₀ + √(1−ᾱ_prev)·input, with ᾱ from the table
    why: z₁ = ({answer[0]:.4g}, {answer[1]:.4g}); nothing in the numbers says the input was not ε — the trace
    must
    """
    from labkit.core.fixtures import fixture_path, read_json
    from labkit.diffusion import ddim_step

    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    z_prev, _ = ddim_step(np.array(fx["z_2"]), np.array([1.0, -1.0]), fx["alpha_bar"]["2"], fx["alpha_bar"]["1"])
    return [float(v) for v in np.ravel(z_prev)]


@value(f"{TRACES}/07-tool-proposal.md", "predict")
def extra_field_first_event() -> str:
    """the fault extra_field injects an argument the schema does not have (notify_all) into the proposal
    after the decoder wrote it. Which event (its event ID) is the first to differ from the golden trace?

    idea: an event records what the runtime holds when it is written, not what the model wrote
    rule: compare the events in order: the decoder's bytes stay the model's own; the first event written
    after the injection that shows the arguments diverges
    why: {answer} is the first event whose payload differs
    """
    return _event_id("tool", "extra_field")


@value(f"{TRACES}/08-tool-proposal-to-commit.md", "predict")
def digest_changes_on_reorder() -> bool:
    """the same arguments written in another key order: does their request digest change? (True or False)

    idea: a digest binds the meaning of a request only if the bytes it hashes have one spelling per meaning
    rule: the digest is taken of canonical JSON (RFC 8785), whose keys are sorted
    why: canonical JSON sorts the keys, so both orders hash the same bytes (the digest changes: {answer})
    """
    from labkit.tools.confirm import request_digest
    from labkit.tools.schedules import fixture_invocation

    arguments = fixture_invocation().normalized_arguments  # the chapter's Invocation, from the fixtures
    return request_digest(arguments) != request_digest(dict(reversed(list(arguments.items()))))


@value(f"{TRACES}/09-tool-second-call.md", "predict")
def reuse_for_other_request() -> int:
    """the cache was built for another request (the same sentence without 提交前让我确认). How many leading
    positions of the second call may reuse it? (an integer)

    idea: a cached key depends on every token before it, so reuse stops at the first difference
    rule: count the leading positions where the two token sequences agree; the template and tool schema
    come first
    why: the two inputs agree on their first {answer} tokens: the template and the schema, up to the user text
    """
    from labkit.check import tools
    from labkit.tools.calls import common_prefix
    from labkit.tools.template import ToolTemplate
    from labkit.tools.tokenizer import ToolTokenizer
    from labkit.tools.toolspec import load_toolspec

    prompt = ToolTemplate().tool_call_prompt([load_toolspec()], OTHER_USER_TEXT)
    return int(common_prefix(np.array([ToolTokenizer().encode(prompt)]), tools.happy_run().second_call.input_ids))


@value(f"{TRACES}/10-tool-failures.md", "predict")
def lost_response_first_event() -> str:
    """in the scenario response_lost_after_commit, which event (its event ID) is the first to differ from
    the happy path?

    idea: a lost answer does not undo the commit: look for the first event that reports what the client heard
    rule: the service committed; the client's record of the outcome is where the two runs part
    why: {answer} is the first event that differs: the client no longer sees the commit
    """
    return _event_id("tool", "response_lost_after_commit")


def _backoff_cases():
    return [
        ("first retry", (0, 100.0, 5000.0, 0.5)),
        ("third retry", (2, 100.0, 5000.0, 0.25)),
        ("past the cap", (10, 100.0, 5000.0, 0.9)),
        ("u = 0: retry at once", (4, 50.0, 1000.0, 0.0)),
        ("exactly at the cap", (5, 100.0, 3200.0, 0.999)),
    ]


@function(f"{TRACES}/10-tool-failures.md", "extend", _backoff_cases)
def jittered_backoff(attempt, base_ms, cap_ms, u):
    """a retry policy the runtime does not have: the delay in ms before retry number `attempt` (0 first)
    with exponential backoff from base_ms, capped at cap_ms, and full jitter drawn as u ∈ [0, 1)

    idea: jitter spreads the retries of many clients so they do not hit the service in step
    rule: the cap bounds the exponential before the jitter scales it; full jitter draws from [0, capped delay)
    """
    return u * min(cap_ms, base_ms * 2.0**attempt)  # full jitter on the capped exponential


@value(f"{TRACES}/11-comparing-traces.md", "predict")
def cfg_swap_divergence() -> tuple[str, str]:
    """the fault cfg_order_swapped: name the first divergence as (event ID, field), e.g. ('d03', 'tensors.x')

    idea: the first divergence is the earliest event and field that differ; later differences are consequences
    rule: a swapped batch order is recorded before any tensor is computed
    why: {answer[0]}, field {answer[1]}: the order is written down before the first network call
    """
    return _event_id("diffusion", "cfg_order_swapped"), _divergence("diffusion", "cfg_order_swapped").field


def _chain(*pairs: tuple[str, str | None]) -> list[dict]:
    """A trace of events (ID, parent ID) with every other field fixed."""
    fields = {"trace_id": "trace-x", "component": "c", "event_type": "a.b", "logical_step": None, "payload": {}}
    return [{**fields, "event_id": e, "parent_event_id": p} for e, p in pairs]


def _chains():
    return [
        ("a well-formed chain", (_chain(("e00", None), ("e01", "e00"), ("e02", "e01")),)),
        ("a parent that points forward", (_chain(("e00", None), ("e01", "e02"), ("e02", "e00")),)),
        ("a parent that does not exist", (_chain(("e00", None), ("e01", "e00"), ("e02", "e09")),)),
        ("a second root", (_chain(("e00", None), ("e01", None), ("e02", "e01")),)),
        ("a tree, not a chain", (_chain(("e00", None), ("e01", "e00"), ("e02", "e00"), ("e03", "e01")),)),
    ]


@function(f"{TRACES}/01-trace-record.md", "diagnose", _chains, agree=exactly)
def bad_parents(events):
    """return the IDs of events whose parent is not an earlier event of the trace (only the first event may
    have no parent), in trace order

    idea: an event may only point back at an event that happened before it
    rule: walk the events in order and remember which IDs you have already seen; a parent is valid only if
    it was seen before the event that names it
    """
    seen: set[str] = set()
    bad = []
    for index, event in enumerate(events):
        parent = event["parent_event_id"]
        if (parent is None and index > 0) or (parent is not None and parent not in seen):
            bad.append(event["event_id"])
        seen.add(event["event_id"])
    return bad


#: the mysteries handed to the reader's function, in order: (kind, fault)
MYSTERIES = (
    ("text", "broken_detokenizer"),
    ("diffusion", "leading_timesteps"),
    ("tool", "unauthorized"),
    ("text", "reset_rope_position"),
)


@table(f"{TRACES}/11-comparing-traces.md", "diagnose", ("kind", "golden", "mystery"), agree=exactly)
def name_the_fault():
    """given a trace kind, its golden trace and a mystery trace, return the name of the catalogue fault
    (labkit.trace.catalogue.faults(kind)) that produced the mystery trace

    idea: compare the two traces event by event: the first divergence names the stage at fault
    rule: find the first divergence (event, rule and field), then read the descriptions of the faults that
    could change that field first; later differences are consequences, not causes
    """
    from labkit.trace import catalogue

    return [
        (f"mystery {number} ({kind})", (kind, catalogue.golden(kind), catalogue.run(kind, fault)), fault)
        for number, (kind, fault) in enumerate(MYSTERIES)
    ]
