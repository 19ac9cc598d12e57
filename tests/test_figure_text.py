"""Kernel-drawn figures a reader sees in JupyterLab at ~840 px of output: no wider than that
(so they are shown unscaled), no text under 8 pt (11 px at 100 dpi; the browser suite checks
the scale they are shown at), and no text cut off at the figure's edge."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

MAX_WIDTH_PX = 840
MIN_TEXT_PT = 8


def scenarios():
    from labkit.reader.traces import scenarios_figure
    from labkit.tools.faults import faulty_config
    from labkit.tools.model import load_decoder
    from labkit.tools.runtime import run_tool_trace
    from labkit.tools.toolspec import load_toolspec

    decoder, spec = load_decoder(), load_toolspec()
    names = [
        "happy",
        "extra_field",
        "confirmation_mismatch",
        "timeout_before_commit",
        "response_lost_after_commit",
        "cancel_after_commit",
        "unauthorized",
        "retry_budget_exhausted",
    ]
    rows = [
        (n, run_tool_trace(faulty_config(None if n == "happy" else n), decoder=decoder, spec=spec).events)
        for n in names
    ]
    return scenarios_figure(rows)


FIGURES = {"page 10: the scenarios side by side": scenarios}


def text_problems(fig) -> list[str]:
    import io

    fig.savefig(io.BytesIO(), format="png")  # lay the figure out as it is saved
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    problems = []
    if width > MAX_WIDTH_PX + 0.5:
        problems.append(f"{width:.0f} px wide: JupyterLab would shrink it")
    for text in fig.findobj(matplotlib.text.Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        if text.get_fontsize() < MIN_TEXT_PT:
            problems.append(f"{text.get_text()[:30]!r} at {text.get_fontsize():.1f} pt")
        box = text.get_window_extent(renderer)
        if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > width + 0.5 or box.y1 > height + 0.5:
            problems.append(f"{text.get_text()[:30]!r} is cut at the figure's edge")
    return problems


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_readable_at_jupyterlab_width(name):
    import matplotlib.pyplot as plt

    fig = FIGURES[name]()
    try:
        assert text_problems(fig) == []
    finally:
        plt.close(fig)


def test_the_check_sees_small_and_cut_text():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 2), dpi=100)
    fig.text(0.5, 0.5, "tiny", fontsize=5.4)
    fig.text(0.98, 0.5, "a long label that runs off the edge", fontsize=9)
    problems = text_problems(fig)
    assert any("900 px" in p for p in problems)
    assert any("5.4 pt" in p for p in problems) and any("cut" in p for p in problems)
