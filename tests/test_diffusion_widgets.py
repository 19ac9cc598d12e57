"""The latent viewer: its state, the replace-frame behaviour, caching, and the static figure."""

import numpy as np
import pytest

from labkit.diffusion import run_diffusion
from labkit.reader.widgets.diffusion import latent_view, latent_viewer, plot_latent_view


@pytest.fixture(scope="module")
def base_run():
    return run_diffusion()


@pytest.fixture(scope="module")
def viewer(base_run):
    return latent_viewer(base_run)


def test_viewer_opens_at_the_final_step(viewer, base_run):
    assert viewer.runs[5.0] is base_run, "the viewer must reuse the run it was given"
    assert viewer.step == 4 and viewer.guidance == 5.0
    assert viewer.step_label.value.startswith("step 4/4 · z_0 · guidance 5")


def test_moving_the_step_slider_changes_the_step_label_and_frame(viewer):
    viewer.step_slider.value = 4
    before_label, before_frame = viewer.step_label.value, viewer.frame.copy()
    viewer.step_slider.value = 1
    assert viewer.step == 1
    assert viewer.step_label.value.startswith("step 1/4 · z_749"), viewer.step_label.value
    assert viewer.step_label.value != before_label
    assert viewer.frame.shape == before_frame.shape, "a preview replaces the frame; it never grows"
    assert not np.array_equal(viewer.frame, before_frame)


def test_a_step_change_only_recomposes_cached_frames(viewer, monkeypatch):
    """Speed by construction (timings belong in benchmarks/): once a guidance scale has
    been run, moving the step slider neither re-runs the loop nor decodes a preview."""
    import labkit.reader.widgets.diffusion as widgets

    def forbidden(*args, **kwargs):
        raise AssertionError("a step change must not re-run the diffusion loop or decode")

    previews_before = dict(viewer.previews.frames)
    monkeypatch.setattr(widgets, "run_diffusion", forbidden)
    monkeypatch.setattr(widgets, "load_models", forbidden)
    for step in (0, 3, 1, 4, 2):
        viewer.step_slider.value = step
        assert viewer.step == step
    assert viewer.previews.frames.keys() == previews_before.keys()


def test_guidance_change_reruns_and_caches(viewer):
    viewer.step_slider.value = 4
    frame5 = viewer.frame.copy()
    viewer.guidance_slider.value = 0.0
    assert set(viewer.runs) == {5.0, 0.0}
    assert "guidance 0" in viewer.step_label.value
    assert not np.array_equal(viewer.frame, frame5), "guidance 0 must draw another picture"
    viewer.guidance_slider.value = 5.0
    assert np.array_equal(viewer.frame, frame5), "returning to guidance 5 must reuse the cached run"


def test_static_figure_uses_the_same_frame(viewer):
    fig = plot_latent_view(viewer.runs[5.0])
    shown = fig.axes[0].images[0].get_array()
    frame, label = latent_view(viewer.runs[5.0], 4)
    assert np.array_equal(np.asarray(shown), frame)
    assert fig.axes[0].get_title() == label
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_step_out_of_range_is_refused(viewer):
    with pytest.raises(ValueError, match=r"step must be an integer in \[0, 4\], got 7"):
        latent_view(viewer.runs[5.0], 7)

