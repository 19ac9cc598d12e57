"""The widgets' PNG cache: a revisited state is shown without drawing, a new state is drawn,
and the key tells states apart by content (``labkit.reader.png``: ``render_png``, ``WidgetView._draw``)."""

import numpy as np
import pytest

import labkit.reader.png as renderer
from labkit.reader.png import content_key


@pytest.fixture(scope="module")
def run():
    from labkit.text.runtime import run_text_trace

    return run_text_trace()


def test_decode_stepper_revisit_and_second_widget_do_not_redraw(run):
    from labkit.reader.widgets.text import decode_stepper

    first = decode_stepper(run)
    step_one = first.image.value
    before = renderer.RENDERS
    first.step = 2
    assert first.image.value != step_one, "step 2 must show a different picture"
    drawn_for_step_two = renderer.RENDERS - before
    assert drawn_for_step_two in (0, 1), f"step 2 drew {drawn_for_step_two} pictures, expected at most 1"
    before = renderer.RENDERS
    first.step = 1
    second = decode_stepper(run, step=2)
    assert renderer.RENDERS == before, f"revisits drew {renderer.RENDERS - before} pictures, expected 0"
    assert first.image.value == step_one, "the revisited step 1 shows another picture"
    assert second.image.value != step_one and second.step == 2


def test_cache_fault_toggles_revisit_does_not_redraw():
    from labkit.reader.widgets.cache_faults import cache_fault_toggles

    toggles = cache_fault_toggles("correct")
    correct_png = toggles.image.value
    toggles.mode_buttons.value = "reset_rope_position"
    assert toggles.image.value != correct_png, "a new mode must show a new picture"
    before = renderer.RENDERS
    toggles.mode_buttons.value = "correct"
    toggles.mode_buttons.value = "reset_rope_position"
    assert renderer.RENDERS == before, f"two revisits drew {renderer.RENDERS - before} pictures, expected 0"
    assert toggles.image.value != correct_png and toggles.case.mode == "reset_rope_position"


def test_heatmap_new_state_is_drawn_once_with_the_first_pictures_layout():
    import io

    from PIL import Image

    from labkit.reader.widgets.attention import attention_heatmap

    heatmap = attention_heatmap(cached=0, mask="top-left rectangular")
    first_size = Image.open(io.BytesIO(heatmap.image.value)).size
    before = renderer.RENDERS
    for cached in (2, 5):
        heatmap.cached_slider.value = cached
    drawn = renderer.RENDERS - before
    assert drawn <= 2, f"two new states drew {drawn} pictures, expected at most 2"
    assert heatmap._layout is not None, "the first picture's layout must be kept for the next states"
    size = Image.open(io.BytesIO(heatmap.image.value)).size
    assert size == first_size, f"a later picture is {size} pixels, the first {first_size}"
    assert heatmap.state.cached == 5 and heatmap.state.weights.shape == (2, 2, 7)


def test_content_key_tells_states_apart_by_content():
    a = {"view": np.arange(4.0), "label": "step 1"}
    same = {"view": np.arange(4.0), "label": "step 1"}
    other = {"view": np.arange(4.0) + 1e-12, "label": "step 1"}
    assert content_key("draw", a) == content_key("draw", same), "equal content must give one key"
    assert content_key("draw", a) != content_key("draw", other), "a 1e-12 change must give another key"
    assert content_key("draw", a) != content_key("other draw", a), "the drawing is part of the key"
    assert content_key("draw", lambda: 1) is None, "an unpicklable state gets no key (always drawn)"


def test_render_png_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(renderer, "PNG_CACHE_SIZE", 3)
    for i in range(5):
        renderer.remember_png(("test", i), b"png%d" % i)
    assert renderer.cached_png(("test", 0)) is None and renderer.cached_png(("test", 1)) is None, \
        "the oldest entries must be dropped beyond PNG_CACHE_SIZE"
    assert renderer.cached_png(("test", 4)) == b"png4"


def test_a_button_press_inside_an_event_loop_draws_the_next_step_ahead(run):
    """In a kernel (an asyncio loop), a press draws its step at once and the next step while
    the kernel is idle, so the following press shows a stored PNG."""
    import asyncio

    from labkit.reader.png import clear_png_cache
    from labkit.reader.widgets.text import decode_stepper

    clear_png_cache()
    widget = decode_stepper(run)                            # step 1 drawn and stored
    assert widget.schedule_prefetch() is False, "outside an event loop nothing may be scheduled"
    before = renderer.RENDERS

    async def press_next_then_idle():
        widget.forward_button.click()                       # step 2 now; step 3 (and 1, stored) ahead
        for _ in range(100):
            if renderer.RENDERS - before >= 2:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)                           # any further (wrong) drawing would land here

    asyncio.run(press_next_then_idle())
    drawn = renderer.RENDERS - before
    assert widget.step == 2
    assert drawn == 2, f"a press drew {drawn} pictures, expected 2 (step 2, then step 3 ahead)"
    before = renderer.RENDERS
    widget.forward()
    assert renderer.RENDERS == before, "step 3 was drawn ahead, yet drawn again when shown"
