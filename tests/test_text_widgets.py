"""The decode stepper, moved without a browser, and its static figure."""

from __future__ import annotations

import numpy as np
import pytest

from labkit.reader.widgets.text import decode_stepper, plot_decode_step, step_views
from labkit.text.runtime import run_text_trace


@pytest.fixture(scope="module")
def run():
    return run_text_trace()


def test_stepper_walks_the_five_steps_with_the_source_cache_lengths(run):
    stepper = decode_stepper(run, images=False)
    seen = []
    for _ in range(5):
        seen.append((stepper.step, stepper.view.cache_at_start, stepper.view.selected))
        assert stepper.cache_length_label.value.startswith(
            f"cache length at step start: {stepper.view.cache_at_start[0]} ")
        stepper.forward()
    assert seen == [(1, (12, 12), 14), (2, (13, 13), 15), (3, (14, 14), 16),
                    (4, (15, 15), 17), (5, (16, 16), 18)]
    assert stepper.step == 5, "forward past the last step must stay at 5"
    assert stepper.forward_button.disabled and not stepper.back_button.disabled


def test_stepper_back_and_direct_step(run):
    stepper = decode_stepper(run, step=3, images=False)
    assert stepper.back() == 2 and stepper.back() == 1 and stepper.back() == 1
    assert stepper.back_button.disabled
    stepper.step = 4
    assert "cache length at step start: 15" in stepper.cache_length_label.value
    with pytest.raises(ValueError, match=r"step must be an integer in \[1, 5\], got 6"):
        stepper.step = 6


def test_stepper_shows_text_selection_events_and_masks(run):
    stepper = decode_stepper(run)
    assert stepper.text_label.value == "streamed so far: 短波蓝光"
    assert "selected: 14 短波蓝光" in stepper.selected_label.value
    assert "masked: [0, 1, 2, 3, 4, 5, 6, 18, 19]" in stepper.selected_label.value
    assert stepper.events_text.splitlines()[0].startswith("e05 token.selected  step=1 token_id=14")
    assert [line.split()[0] for line in stepper.events_text.splitlines()] == ["e05", "e06", "e07", "e08"]
    stepper.step = 5
    assert stepper.text_label.value == "streamed so far: 短波蓝光的散射通常更强。"
    assert [line.split()[0] for line in stepper.events_text.splitlines()] == ["e21", "e22", "e23", "e24"]
    assert stepper.view.cache_after is None
    assert "e23 response.completed" in stepper.events_box.value, "the HTML box must show the events"
    assert bytes(stepper.image.value).startswith(b"\x89PNG"), "step 5 must show a PNG"


def test_step_views_keep_raw_and_processed_logits_apart(run):
    first = step_views(run)[0]
    assert np.isfinite(first.raw_logits).all()
    assert first.masked_ids == [0, 1, 2, 3, 4, 5, 6, 18, 19]
    allowed = [i for i in range(20) if i not in first.masked_ids]
    assert np.array_equal(first.raw_logits[allowed], first.processed_logits[allowed])


def test_static_figure_is_the_default_step(run):
    import matplotlib

    matplotlib.use("Agg")
    fig = plot_decode_step(run)
    try:
        logits_ax, cache_ax = fig.axes
        assert "step 1/5: cache 12 → 13" in fig._suptitle.get_text()
        assert [t.get_text() for t in logits_ax.get_xticklabels()][14] == "14 短波蓝光"
        assert [round(p.get_height()) for p in cache_ax.patches] == [12, 12, 13, 13]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_prefill_attention_view_is_causal_and_normalised(run):
    import matplotlib

    matplotlib.use("Agg")
    from labkit.reader.widgets.text import plot_prefill_attention

    for layer in run.prefill.layers:
        weights = layer.attention_weights[0]                          # [H_q, 12, 12]
        assert weights.shape == (2, 12, 12)
        future = np.triu(np.ones((12, 12), dtype=bool), k=1)
        assert np.all(weights[:, future] == 0), f"layer {layer.layer} attends to future keys"
        assert np.allclose(weights.sum(-1), 1, atol=1e-6)
    fig = plot_prefill_attention(run)
    try:
        assert len(fig.axes) == 4
        assert fig.axes[0].get_title() == "layer 0, query head 0 (reads KV head 0)"
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_stepper_on_a_faulty_run_ends_with_its_own_finish_reason():
    from labkit.text.faults import faulty_config

    stepper = decode_stepper(run_text_trace(faulty_config("eos_in_control_mask")), images=False)
    assert stepper.n_steps == 8
    stepper.step = 5
    assert "selected: 10 是" in stepper.selected_label.value, "EOS masked: step 5 falls to the runner-up"
    stepper.step = 8
    assert stepper.view.finish_reason == "length" and stepper.view.cache_after is None
    assert "cache length at step start: 19" in stepper.cache_length_label.value
