"""Chapter 7's exact spellings: every artifact ID, status and processor name the chapter
prints, read back from what labkit computes (golden traces, runs, configurations).

Each row: what, the chapter's spelling, where (§) and how labkit's value is read — a path
into a golden trace's payload (FIELDS) or a function (SPELLINGS).  A renamed artifact, a
status spelled with underscores instead of hyphens or a processor listed under another name
fails its own row.
"""

import pytest

from labkit.text.processors import DEFAULT_ORDER, SamplingConfig
from labkit.tools.faults import faulty_config
from labkit.tools.runtime import run_tool_trace
from labkit.trace import catalogue


def _payload(kind: str, event_id: str, scenario: str | None = None) -> dict:
    events = catalogue.golden(kind) if scenario is None else _run(scenario).events
    return next(e for e in events if e["event_id"] == event_id)["payload"]


_RUNS: dict = {}


def _run(scenario: str):
    if scenario not in _RUNS:
        _RUNS[scenario] = run_tool_trace(faulty_config(scenario))
    return _RUNS[scenario]


def _event_types(kind: str) -> list[str]:
    return [e["event_type"] for e in catalogue.golden(kind)]


#: §7.2's processor order, as the chapter writes it.
PROCESSOR_ORDER = (
    "control_token_mask → minimum_length_eos_mask → grammar_mask"
    " → repetition_transforms → temperature_disabled → truncation_disabled"
).split(" → ")

#: Payload fields: (what, the chapter's spelling, §, where: "trace kind, event ID, keys into its payload").
FIELDS = [
    ("text model_id", "toy-decoder-v1", "7.2", "text e00 artifacts model_id"),
    ("text strategy", "greedy", "7.2", "text e00 artifacts sampler"),
    ("text finish_reason", "eos", "7.4", "text e22 finish_reason"),
    ("text_encoder_id", "toy-text-encoder-v2", "7.6", "diffusion d00 artifacts text_encoder_id"),
    ("denoiser_id", "toy-latent-denoiser-v3", "7.6", "diffusion d02 artifacts denoiser_id"),
    ("sampler", "ddim-v1", "7.6", "diffusion d01 artifacts sampler"),
    ("prng", "Philox4x32-10", "7.6", "diffusion d01 artifacts prng"),
    ("normal_transform", "box-muller-v1", "7.6", "diffusion d01 artifacts normal_transform"),
    ("prediction_type", "epsilon", "7.6", "diffusion d01 scheduler prediction_type"),
    ("preview mode", "replace-frame", "7.7", "diffusion d02 preview mode"),
    ("tool model_id", "toy-tool-decoder-v1", "7.10", "tool t00 artifacts model_id"),
    ("template_id", "toy-tool-template-v1", "7.10", "tool t00 artifacts template_id"),
    ("tokenizer_id", "toy-tool-tokenizer-v1", "7.10", "tool t00 artifacts tokenizer_id"),
    ("strategy (mc_01)", "greedy_with_json_grammar", "7.10", "tool t00 artifacts sampler"),
    ("tool", "calendar.create_event@v1", "7.10", "tool t00 artifacts tool_version"),
    ("subject", "user-42", "7.10", "tool t05 subject"),
    ("capability", "calendar.write:primary", "7.10", "tool t05 capability"),
    ("timezone", "Asia/Shanghai", "7.10", "tool t04 timezone"),
    ("model_call_id (first)", "mc_01", "7.11", "tool t00 model_call_id"),
    ("proposal ID", "p_01", "7.11", "tool t01 proposal_id"),
    ("finish_reason (proposal)", "tool_proposal_complete", "7.11", "tool t01 finish_reason"),
    ("validator", "Draft 2020-12", "7.11", "tool t03 validator"),
    ("invocation_id", "inv_01", "7.12", "tool t04 invocation_id"),
    ("confirmation_id", "confirm_01", "7.12", "tool t07 confirmation_id"),
    ("decision", "approve", "7.12", "tool t07 decision"),
    ("scope", "user-42/primary", "7.13", "tool t08 scope"),
    ("idempotency_key", "req-42:create-event:1", "7.13", "tool t08 idempotency_key"),
    ("result status", "ok", "7.13", "tool t09 commit status"),
    ("event ID", "evt_6K2", "7.13", "tool t09 commit event_id"),
    ("model_call_id (second)", "mc_02", "7.14", "tool t11 model_call_id"),
    ("tool_call_id", "p_01", "7.14", "tool t11 tool_call_id"),
    ("tool_result_status", "ok", "7.14", "tool t11 tool_result_status"),
    ("tool_result_event_id", "evt_6K2", "7.14", "tool t11 tool_result_event_id"),
    ("finish reason (answer)", "EOS", "7.14", "tool t13 finish_reason"),
]

#: Values read another way (whole lists, the faulty runs): (what, the chapter's spelling, §, a
#: function returning labkit's value).
SPELLINGS = [
    # §7.1–7.4: trace one
    ("text trace ID", "trace-text-001", "7.1", lambda: catalogue.golden("text")[0]["trace_id"]),
    ("processor_order (configuration)", PROCESSOR_ORDER, "7.2", lambda: list(SamplingConfig().processor_order)),
    ("processor_order (DEFAULT_ORDER)", PROCESSOR_ORDER, "7.2", lambda: list(DEFAULT_ORDER)),
    ("processor_order (recorded at e05)", PROCESSOR_ORDER, "7.2", lambda: _payload("text", "e05")["processor_order"]),
    (
        "text event types e00–e06",
        (
            "request.accepted context.rendered input.tokenized prefill.started prefill.completed"
            " token.selected stream.delta"
        ).split(),
        "7.3",
        lambda: _event_types("text")[:7],
    ),
    (
        "text terminal events",
        ["token.selected", "generation.draining", "response.completed", "resources.released"],
        "7.4",
        lambda: _event_types("text")[21:25],
    ),
    # §7.7: trace two
    (
        "diffusion event types d00–d08",
        ["condition.encoded", "latent.initialized"]
        + ["denoise.updated"] * 4
        + ["vae.decoded", "image.encoded", "response.completed"],
        "7.7",
        lambda: _event_types("diffusion"),
    ),
    # §7.11–7.14: trace three
    (
        "tool states t01–t10",
        "PROPOSED PARSED VALIDATED VALIDATED AUTHORIZED PREPARED PREPARED EXECUTING COMMITTED OBSERVED".split(),
        "7.11–7.13",
        lambda: [_payload("tool", f"t{i:02d}")["state"] for i in range(1, 11)],
    ),
    (
        "cancel request status",
        "cancelled-after-commit",
        "7.13",
        lambda: _payload("tool", "t11", "cancel_after_commit")["request_status"],
    ),
    (
        "tool event types t00–t14",
        (
            "model.started proposal.generated proposal.parsed schema.validated invocation.normalized"
            " authorization.allowed confirmation.requested confirmation.approved invocation.started"
            " external.committed result.encoded model.started text.delta response.completed trace.closed"
        ).split(),
        "7.11–7.14",
        lambda: _event_types("tool"),
    ),
    # §7.15
    ("extra field", "notify_all", "7.15", lambda: _payload("tool", "t03", "extra_field")["keys"][-1]),
    ("extra-field state", "VALIDATION_REJECTED", "7.15", lambda: _payload("tool", "t03", "extra_field")["state"]),
    (
        "lost-response state",
        "OUTCOME_UNKNOWN",
        "7.15",
        lambda: _payload("tool", "t09", "response_lost_after_commit")["state"],
    ),
]


@pytest.mark.parametrize(("what", "spelling", "section", "where"), FIELDS, ids=[row[0] for row in FIELDS])
def test_payload_fields_are_spelled_as_the_chapter_does(what, spelling, section, where):
    kind, event_id, *keys = where.split()
    value = _payload(kind, event_id)
    for key in keys:
        value = value[key]
    assert value == spelling, f"§{section} {what}: the chapter spells {spelling!r}"


@pytest.mark.parametrize(("what", "spelling", "section", "computed"), SPELLINGS, ids=[row[0] for row in SPELLINGS])
def test_labkit_spells_it_as_the_chapter_does(what, spelling, section, computed):
    assert computed() == spelling, f"§{section} {what}: the chapter spells {spelling!r}"


@pytest.mark.parametrize(
    ("event_id", "shape_key", "chapter"),
    [
        ("t00", "input_ids_shape", [1, 86]),
        ("t00", "residual_shape", [1, 86, 16]),
        ("t00", "raw_logits_shape", [1, 256]),
        ("t11", "input_ids_shape", [1, 132]),
        ("t11", "residual_shape", [1, 132, 16]),
        ("t11", "raw_logits_shape", [1, 256]),
    ],
)
def test_shapes_are_the_chapters(event_id, shape_key, chapter):
    assert _payload("tool", event_id)[shape_key] == chapter


def test_mc_02_residual_shapes_are_read_from_the_run():
    """§7.14's [1, 132, 16] is the logical residual; with 86 positions reused, the tensor the
    second call really computes is [1, 46, 16]. Both come from the run, not from a format."""
    trace = run_tool_trace()
    call, payload = trace.second_call, _payload("tool", "t11")
    assert call.prefill.layers[-1].residual_out == payload["prefilled_residual_shape"] == [1, 46, 16]
    assert call.prefill.layers[-1].cache_k[2] == payload["residual_shape"][1] == 132
    # without reuse, the same fields describe a from-scratch prefill of all 132 positions
    from labkit.tools.calls import model_started_payload, second_model_call
    from labkit.tools.model import load_decoder
    from labkit.tools.toolspec import load_toolspec

    scratch = second_model_call(
        load_decoder(),
        load_toolspec(),
        trace.config.user_text,
        trace.first_call,
        payload_tool_message(),
        reuse=lambda cached, new: 0,
    )
    again = model_started_payload(scratch, {})
    assert again["residual_shape"] == again["prefilled_residual_shape"] == [1, 132, 16]


def payload_tool_message() -> dict:
    return _payload("tool", "t10")["tool_message"]


def test_a_processor_named_against_its_configuration_is_refused():
    with pytest.raises(ValueError, match="lists 'temperature_disabled' but temperature is configured"):
        SamplingConfig(processor_order=DEFAULT_ORDER, temperature=0.7)
    assert SamplingConfig(temperature=0.7, top_k=2).processor_order[4:] == ("temperature", "truncation")
