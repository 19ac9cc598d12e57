"""The grammar stepper's state without a browser, and the static figures' shared renderer."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from labkit.reader.widgets.tools import (  # noqa: E402
    GrammarStepper,
    draw_grammar_step,
    draw_prefix_reuse,
    draw_state_machine,
    grammar_step_figure,
    grammar_step_views,
)
from labkit.tools.runtime import run_tool_trace  # noqa: E402


@pytest.fixture(scope="module")
def trace():
    return run_tool_trace()


def test_stepper_starts_at_step_one_and_moves_with_clamping(trace):
    stepper = GrammarStepper(trace.first_call, images=False)
    assert stepper.n_steps == 27
    assert (stepper.step, stepper.allowed_label.value, stepper.json_label.value) == (
        1,
        "allowed: 2 tokens",
        'JSON so far: {"',
    )
    stepper.back()
    assert stepper.step == 1, "back() at step 1 must stay at step 1"
    stepper.forward()
    assert stepper.chosen_label.value.endswith("calendar_id")
    stepper.step = 27
    assert stepper.allowed_label.value == "allowed: 1 tokens (forced)"
    assert stepper.chosen_label.value.endswith("<|call_end|>")
    assert stepper.json_label.value.endswith('"duration_minutes":10}')
    stepper.forward()
    assert stepper.step == 27
    with pytest.raises(ValueError, match=r"step must be an integer in \[1, 27\], got 0"):
        stepper.step = 0


def test_views_chain_the_json_and_match_the_decode(trace):
    views = grammar_step_views(trace.first_call)
    for before, after in zip(views, views[1:], strict=False):
        assert after.json_before == before.json_after
    assert views[-1].json_after == trace.first_call.decode.text
    assert [v.allowed_count for v in views] == trace.events[1]["payload"]["allowed_counts"]
    chosen_best = [v.best_allowed(1)[0][0] == v.chosen_id for v in views]
    assert all(chosen_best), (
        f"the chosen piece is not the best allowed at steps {[i + 1 for i, ok in enumerate(chosen_best) if not ok]}"
    )


def test_widget_image_and_static_figure_use_one_renderer(trace):
    stepper = GrammarStepper(trace.first_call, step=8)
    assert stepper.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    fig = grammar_step_figure(trace.first_call, step=8)
    titles = [ax.get_title() for ax in fig.axes]
    assert "step 8/27: 166 of 256 tokens allowed" in titles
    import matplotlib.pyplot as plt

    plt.close(fig)
    assert draw_grammar_step is not None


def test_state_machine_and_prefix_figures_draw(trace):
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(2, 1)
    draw_state_machine(a, ["PROPOSED", "PARSED"])
    draw_prefix_reuse(b, trace.second_call, 20)
    labels = [t.get_text() for t in b.get_legend().get_texts()]
    assert labels == ["reused from mc_01's cache: 86", "prefilled in mc_02: 46", "generated answer: 20"]
    plt.close(fig)
