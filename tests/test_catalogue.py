"""Issue 7's fault catalogue: every named fault of every trace, run against its golden trace,
first diverges at the expected event, by the expected rule, with the expected suspect."""

import pytest

from labkit.trace import catalogue

MODEL = "model / numeric path"
PROCESSORS = "logits processors or tie-break"
EXPECTED = {
    "text": {
        "perturbed_weight": ("e04", "tensors", MODEL),
        "reset_rope_position": ("e08", "tensors", MODEL),
        "copy_layer0_cache_to_layer1": ("e12", "tensors", MODEL),
        "wrong_processor_order": ("e05", "discrete_state", PROCESSORS),
        "eos_before_minimum_length": ("e05", "discrete_state", PROCESSORS),
        "eos_in_control_mask": ("e05", "discrete_state", PROCESSORS),
        "tie_break_last_index": ("e05", "discrete_state", PROCESSORS),
        "broken_detokenizer": ("e06", "discrete_state", "detokenizer"),
    },
    "diffusion": {
        "cfg_order_swapped": ("d00", "discrete_state", "CFG batch order"),
        "leading_timesteps": ("d01", "discrete_state", "scheduler timesteps"),
        "eta_positive": ("d01", "discrete_state", "eta"),
        "other_seed": ("d01", "discrete_state", "seed → PRNG key"),
        "counter_offset": ("d01", "tensors", "PRNG counter"),
        "vae_scaling_omitted": ("d06", "discrete_state", "VAE scaling"),
        "png_timestamp": ("d07", "tensors", "PNG encoder"),
    },
    "tool": {
        # §7.15: the extra field is caught where t03 would validate; t01/t02 stay the model's own
        "extra_field": ("t03", "event_type_and_parent", "a field outside the ToolSpec"),
        "not_json": ("t02", "event_type_and_parent", "between decoder and parser"),
        "confirmation_mismatch": ("t07", "event_type_and_parent", "confirmation binding"),
        "tampered_digest": ("t07", "event_type_and_parent", "confirmation binding"),
        "unauthorized": ("t05", "event_type_and_parent", "authorisation"),
        "timeout_before_commit": ("t09", "event_type_and_parent", "commit boundary"),
        "response_lost_after_commit": ("t09", "event_type_and_parent", "commit boundary"),
        "retry_budget_exhausted": ("t09", "event_type_and_parent", "commit boundary"),
        "cancel_after_commit": ("t10", "event_type_and_parent", "cancellation after the commit boundary"),
        "new_key_second_attempt": ("t09", "event_type_and_parent", "commit boundary"),
        "crash_after_journal_write": ("t09", "event_type_and_parent", "crashed"),
        "query_unavailable": ("t09", "event_type_and_parent", "commit boundary"),
        "crash_after_service_commit": ("t09", "event_type_and_parent", "crashed"),
    },
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_catalogue_has_at_least_five_faults_and_all_are_expected(kind):
    names = set(catalogue.faults(kind))
    assert len(names) >= 5
    assert names == set(EXPECTED[kind]), f"faults without an expectation: {names ^ set(EXPECTED[kind])}"


@pytest.mark.parametrize(("kind", "fault"), [(k, f) for k in sorted(EXPECTED) for f in EXPECTED[k]])
def test_fault_first_diverges_where_expected(kind, fault):
    event, rule, suspect = EXPECTED[kind][fault]
    found = catalogue.diagnose(kind, fault)
    assert found is not None, f"{kind}/{fault} produced the golden trace"
    assert (found.event_ids[0], found.rule) == (event, rule), found.describe()
    assert suspect in found.suspect, found.describe()


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_correct_run_equals_golden(kind):
    from labkit.trace.divergence import first_divergence

    assert first_divergence(catalogue.golden(kind), catalogue.run(kind)) is None


def test_unknown_kind_and_fault_are_named():
    with pytest.raises(ValueError, match="unknown trace kind 'audio'"):
        catalogue.faults("audio")
    with pytest.raises(ValueError, match="unknown text fault 'nope'"):
        catalogue.run("text", "nope")
