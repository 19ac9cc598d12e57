"""The key of the preface and trace one: the worked solutions pass with it, in every reasonable form; near
misses fail; the hidden cases catch answers that fit only the public ones."""

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import without_key
from labkit.check.trace_one import damaged_traces, looping_request, min_p_cases, ngram_cases
from labkit.nn import attention, rms_norm, rope
from labkit.text.model import load_decoder

GRADED = ("cut_off_events", "no_repeat_ngram_mask", "largest_min_p", "decode_one")
MINE = ("rms_norm_row", "eos_fault_first_event", "eos_in_control_step") + GRADED


@pytest.fixture(autouse=True)
def fresh_attempts():
    yield
    check.core.reset_attempts()


@pytest.fixture
def mine(solution):
    return solution("trace_one")


@pytest.mark.parametrize("name", MINE)
def test_the_worked_solution_passes_with_the_key_and_without_it(name, mine):
    exercise = check.exercises()[name]
    assert exercise(getattr(mine, name)).passed
    with without_key():
        assert exercise(getattr(mine, name)).status == "passed"  # every check of this group is public


@pytest.mark.parametrize("name", MINE)
def test_reveal_shows_each_answer_from_the_key_and_records_it(name):
    shown = check.reveal(name)
    assert shown.text and check.exercises()[name].revealed
    with without_key():
        if name in GRADED:
            with pytest.raises(LookupError):
                check.reveal(name)


def test_the_key_reference_of_decode_one_passes():
    assert check.decode_one(check.exercises()["decode_one"].reference).passed


def test_the_graded_exercises_are_graded_and_the_predictions_are_not():
    for name in GRADED:
        assert check.exercises()[name].graded and check.exercises()[name].keyed
    for name in MINE[:3]:
        assert check.exercises()[name].points == 0


@pytest.mark.parametrize("form", [1.2, np.float64(1.2), np.float32(1.2), np.array(1.2), 1.19])
def test_rms_norm_row_takes_every_form_of_a_number(form):
    assert check.rms_norm_row(form).passed


@pytest.mark.parametrize("wrong", [1.2 + 0.0101, 1.2 - 0.0101, "1.2", [1.2]])
def test_rms_norm_row_refuses_a_near_miss_and_other_types(wrong):
    assert not check.rms_norm_row(wrong).passed


@pytest.mark.parametrize("form", [5, 5.0, np.int64(5), np.array(5)])
def test_eos_in_control_step_grades_the_selection(form):
    assert check.eos_in_control_step(form).passed
    assert not check.eos_in_control_step(1).passed  # the masked-IDs record, not the selection
    assert not check.eos_in_control_step(4).passed and not check.eos_in_control_step(5.5).passed


@pytest.mark.parametrize("form", ["e05", "E05", " e05 "])
def test_eos_fault_first_event_takes_the_id_in_any_case_and_spacing(form):
    assert check.eos_fault_first_event(form).passed
    assert not check.eos_fault_first_event("e04").passed and not check.eos_fault_first_event(5).passed


# -- hidden cases catch what fits only the public ones -------------------------------------------


def test_cut_off_events_memorised_on_the_public_traces_fails_the_hidden_ones(mine):
    table = {
        tuple(e["event_id"] + str(e["parent_event_id"]) for e in t): mine.cut_off_events(t) for _, t in damaged_traces()
    }
    memorised = lambda events: table.get(tuple(e["event_id"] + str(e["parent_event_id"]) for e in events), [])  # noqa: E731
    with without_key():
        assert check.cut_off_events(memorised).passed
    result = check.cut_off_events(memorised)
    assert not result.passed and result.where.startswith("case “the first event has a parent”"), repr(result)


def test_no_repeat_ngram_mask_that_assumes_20_tokens_fails_the_hidden_vocabulary(mine):
    def twenty(logits, selected, n):
        out = mine.no_repeat_ngram_mask(logits, selected, n)
        out[20:] = logits[20:]
        return out

    with without_key():
        assert check.no_repeat_ngram_mask(twenty).passed
    result = check.no_repeat_ngram_mask(twenty)
    assert not result.passed and "V = 50" in result.where, repr(result)


def test_no_repeat_ngram_mask_right_only_for_n_up_to_2_fails_the_hidden_runs(mine):
    def short_memory(logits, selected, n):
        return mine.no_repeat_ngram_mask(logits, selected, min(n, 3) if len(selected) <= 8 else min(n, 2))

    result = check.no_repeat_ngram_mask(short_memory)
    assert not result.passed and "n = 3" in result.where and "token.selected" in result.where, repr(result)


def test_no_repeat_ngram_mask_that_forgets_after_eight_tokens_fails_inside_the_runtime(mine):
    def forgetful(logits, selected, n):
        return np.array(logits, copy=True) if len(selected) > 8 else mine.no_repeat_ngram_mask(logits, selected, n)

    with without_key():
        result = check.no_repeat_ngram_mask(forgetful)
    assert not result.passed and result.where.startswith("e"), repr(result)
    assert "field masked_ids — n = 2" in result.where


def test_largest_min_p_memorised_on_the_public_rows_fails_the_hidden_ones(mine):
    table = {(tuple(np.asarray(z).tolist()), k): mine.largest_min_p(z, k) for _, (z, k) in min_p_cases()}
    memorised = lambda z, k: table.get((tuple(np.asarray(z).tolist()), k), 0.5)  # noqa: E731
    with without_key():
        assert check.largest_min_p(memorised).passed
    assert not check.largest_min_p(memorised).passed


@pytest.mark.parametrize("factor", [1 + 1e-6, 1 - 1e-6])
def test_largest_min_p_just_off_fails(mine, factor):
    with without_key():
        assert not check.largest_min_p(lambda z, k: mine.largest_min_p(z, k) * factor).passed


def test_the_public_ngram_cases_mask_something_in_each_case_but_one(mine):
    masked = [
        np.isneginf(mine.no_repeat_ngram_mask(*args)).sum() - np.isneginf(args[0]).sum() for _, args in ngram_cases()
    ]
    assert sum(m > 0 for m in masked) == len(masked) - 1  # "fewer tokens than n − 1" masks nothing
    _, with_mask = looping_request(2)
    events = with_mask(mine.no_repeat_ngram_mask)
    selected = [e["payload"]["token_id"] for e in events if e["event_type"] == "token.selected"]
    assert selected[:6] == [14, 15, 16, 17, 10, 17] and selected[6] != 10  # the loop is broken


# -- decode_one: the usual mistakes, each caught at its place ----------------------------------------


def _decode(position_shift=0, appends=1, position_of=None, weights_of=None):
    """A from-parts decode step with a mistake injected (none by default: then it is right)."""

    def decode_one(decoder, cache, token_id):
        cfg = decoder.config
        w = weights_of() if weights_of else decoder.weights
        at = position_of(cache, token_id) if position_of else cache.length + position_shift
        position = np.array([at])

        def heads(x, n):
            return x.reshape(1, 1, n, cfg.head_dim).transpose(0, 2, 1, 3)

        x = w.embedding[[[token_id]]]
        for i, layer in enumerate(w.layers):
            h = rms_norm(x, cfg.norm_eps)
            q = rope(heads(h @ layer["q"], cfg.n_q_heads), position, cfg.rope_base)
            k = rope(heads(h @ layer["k"], cfg.n_kv_heads), position, cfg.rope_base)
            v = heads(h @ layer["v"], cfg.n_kv_heads)
            keys = np.concatenate([cache.keys[i], k], axis=-2)
            values = np.concatenate([cache.values[i], v], axis=-2)
            for _ in range(appends):
                cache.append(i, k, v)
            out, _ = attention(
                q,
                np.repeat(keys, cfg.group_size, 1),
                np.repeat(values, cfg.group_size, 1),
                np.ones((1, keys.shape[-2]), dtype=bool),
            )
            x = x + out.transpose(0, 2, 1, 3).reshape(1, 1, -1) @ layer["o"]
            h = rms_norm(x, cfg.norm_eps)
            gate = h @ layer["gate"]
            x = x + (gate / (1 + np.exp(-gate)) * (h @ layer["up"])) @ layer["down"]
        return (rms_norm(x, cfg.norm_eps) @ w.output)[0, 0]

    return decode_one


def test_the_mistake_free_helper_passes():
    assert check.decode_one(_decode()).passed


@pytest.mark.parametrize("shift", [1, -1, -12])
def test_decode_one_position_off_is_caught_at_the_first_decode(shift):
    with without_key():
        result = check.decode_one(_decode(position_shift=shift))
    assert not result.passed and result.rule == "tensors"
    assert result.where.startswith("e08 decode.completed (step 1), field tensors.raw_logits"), result.where


@pytest.mark.parametrize(("appends", "length"), [(0, 12), (2, 14)])
def test_decode_one_that_does_not_grow_the_cache_by_one_is_caught(appends, length):
    with without_key():
        result = check.decode_one(_decode(appends=appends))
    assert not result.passed and result.where.startswith("e08 decode.completed (step 1), field new_cache_length")
    assert result.got == length


def test_decode_one_that_assumes_the_chapters_12_token_prompt_fails_the_shorter_request():
    fed = []

    def twelve_plus_tokens_fed(cache, token_id):
        if token_id == 14:  # the first answer token: a new request has started
            fed.clear()
        fed.append(token_id)
        return 12 + len(fed) - 1

    with without_key():
        result = check.decode_one(_decode(position_of=twelve_plus_tokens_fed))
    assert not result.passed and "11 input IDs" in result.where and result.where.startswith("e08 "), result.where


def test_decode_one_with_the_pages_decoder_weights_fails_on_other_decoders():
    toy = load_decoder().weights
    with without_key():
        result = check.decode_one(_decode(weights_of=lambda: toy))
    assert not result.passed and "different lengths [6, 6, 5]" in result.message, repr(result)  # toy has 2 layers
