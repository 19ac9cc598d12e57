"""The divergence explorer follows its pickers, and its static figure is the same drawing."""

from labkit.reader.widgets.divergence import DEFAULT, divergence_explorer, draw_timelines


def test_explorer_default_shows_the_perturbed_weight_at_e04():
    explorer = divergence_explorer(render=False)
    assert (explorer.kind, explorer.fault) == DEFAULT
    assert explorer.divergence.event_ids == ("e04", "e04")
    assert "rule    : tensors" in explorer.summary_label.value


def test_changing_kind_and_fault_updates_the_diagnosis():
    explorer = divergence_explorer(render=False)
    explorer.kind_picker.value = "tool"
    assert explorer.fault == "extra_field" and explorer.divergence.event_ids[0] == "t03"
    explorer.fault_picker.value = "unauthorized"
    assert explorer.divergence.event_ids[0] == "t05"
    assert "authorization.denied" in explorer.summary_label.value


def test_rendered_explorer_carries_a_png_and_the_static_figure_has_two_rows():
    explorer = divergence_explorer()
    assert explorer.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    fig = draw_timelines(*DEFAULT, pyplot=False)
    ax = fig.axes[0]
    assert "first divergence at event #4" in ax.get_title()
    assert len(ax.collections) == 2 * 25  # 25 events in each of the two timelines
