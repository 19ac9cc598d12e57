"""The widgets' PNG cache: a revisited state is shown without drawing, a new state is drawn,
and the key tells states apart by content (``labkit.reader.png``: ``render_png``, ``WidgetView._draw``)."""

import numpy as np
import pytest

import labkit.reader.png as renderer
from labkit.reader.png import content_key


@pytest.fixture(scope="module")
def first_call():
    from labkit.tools.runtime import run_tool_trace

    return run_tool_trace().first_call


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
    assert renderer.cached_png(("test", 0)) is None and renderer.cached_png(("test", 1)) is None, (
        "the oldest entries must be dropped beyond PNG_CACHE_SIZE"
    )
    assert renderer.cached_png(("test", 4)) == b"png4"


def test_a_button_press_inside_an_event_loop_draws_the_next_step_ahead(first_call):
    """In a kernel (an asyncio loop), a press draws its step at once and the next step while
    the kernel is idle, so the following press shows a stored PNG."""
    import asyncio

    from labkit.reader.png import clear_png_cache
    from labkit.reader.widgets.tools import GrammarStepper

    clear_png_cache()
    widget = GrammarStepper(first_call)  # step 1 drawn and stored
    assert widget.schedule_prefetch() is False, "outside an event loop nothing may be scheduled"
    before = renderer.RENDERS

    async def press_next_then_idle():
        widget.forward_button.click()  # step 2 now; step 3 (and 1, stored) ahead
        for _ in range(100):
            if renderer.RENDERS - before >= 2:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # any further (wrong) drawing would land here

    asyncio.run(press_next_then_idle())
    drawn = renderer.RENDERS - before
    assert widget.step == 2
    assert drawn == 2, f"a press drew {drawn} pictures, expected 2 (step 2, then step 3 ahead)"
    before = renderer.RENDERS
    widget.forward()
    assert renderer.RENDERS == before, "step 3 was drawn ahead, yet drawn again when shown"
