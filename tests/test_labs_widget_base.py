"""The one front end of the chapter-11 widgets: every lab widget uses it, and what it draws
is pixel for pixel what the page's static figure shows."""

import inspect

import pytest

from labkit.reader.widgets import attention as widgets_attention
from labkit.reader.widgets import lab_base as widget_base

#: every lab widget module and how many widgets it holds
LAB_WIDGETS = {widgets_attention: 1}


def _widget_classes(module):
    return [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__ and hasattr(cls, "update")
    ]


@pytest.mark.parametrize("module", list(LAB_WIDGETS), ids=lambda m: m.__name__)
def test_every_lab_widget_is_a_widget_view_and_keeps_no_private_copy(module):
    classes = _widget_classes(module)
    assert len(classes) == LAB_WIDGETS[module], f"{module.__name__}: expected its widget classes, found {classes}"
    for cls in classes:
        assert issubclass(cls, widget_base.WidgetView), f"{cls.__name__} does not derive from WidgetView"
    for copy in ("_new_figure", "_png", "_Widget", "_WidgetView"):
        assert not hasattr(module, copy), f"{module.__name__} still defines its own {copy}"


def test_attention_widget_png_equals_its_static_figure():
    import matplotlib.pyplot as plt

    from labkit.reader import figure_png

    figure = widgets_attention.mask_viewer_figure()
    static_png = figure_png(figure)
    plt.close(figure)
    widget_png = widgets_attention.mask_viewer().image.value
    assert widget_png[:4] == b"\x89PNG", "the widget shows no PNG"
    assert_same_pixels(widget_png, static_png, "mask viewer widget", "its static figure")


def assert_same_pixels(png_a: bytes, png_b: bytes, name_a: str, name_b: str) -> None:
    """The two PNGs decode to the same image (their zlib levels may differ)."""
    import io

    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(io.BytesIO(png_a)).convert("RGBA"))
    b = np.asarray(Image.open(io.BytesIO(png_b)).convert("RGBA"))
    assert a.shape == b.shape, f"{name_a} is {a.shape}, {name_b} is {b.shape}"
    differing = int(np.any(a != b, axis=-1).sum())
    assert differing == 0, f"{name_a} and {name_b} differ in {differing} of {a.shape[0] * a.shape[1]} pixels"


def test_render_false_keeps_the_state_but_draws_nothing_and_refusals_keep_the_picture():
    quiet = widgets_attention.mask_viewer(render=False)
    assert quiet.image.value == b"", "render=False must not draw"
    quiet.document_ids_text.value = "0 0 0 1 1 1 1 1"
    assert quiet.state.document_ids.tolist() == [0, 0, 0, 1, 1, 1, 1, 1] and quiet.error is None

    editor = widgets_attention.mask_viewer()
    picture, state = editor.image.value, editor.state
    editor.document_ids_text.value = "0 0 x"
    assert editor.error == "document IDs must be non-negative integers separated by spaces, got '0 0 x'"
    assert "cannot draw:" in editor.message.value and "&#x27;0 0 x&#x27;" in editor.message.value, (
        "the refusal is shown HTML-escaped"
    )
    assert editor.state is state and editor.image.value == picture, "a refusal keeps the last state and picture"
    editor.document_ids_text.value = "0 0 1 1 1 1 1 1"
    assert editor.error is None and editor.image.layout.display is None, "a good input shows the picture again"
