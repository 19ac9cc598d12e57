"""What the static book can show of a stored output.

The static site's theme shows a ``text/markdown`` output as raw Markdown (fences and
backticks visible) and ignores an image's ``width`` metadata. So, in every stored ``.ipynb``:
- an output with ``text/markdown`` (every ``show_source``) carries a ``text/html`` form too;
- no image output relies on ``width``/``height`` metadata (``labkit.reader.PNG`` puts the
  width into an ``<img width>`` instead);
- no live ipywidget shows in the static book: a code cell tagged ``widget`` is tagged
  ``nbval-ignore-output``; a player's widget cell is followed by a markdown cell holding the
  player's ``{anywidget}`` directive and is tagged ``remove-output`` (the static book shows the
  player, not the kernel widget's "kernel required" note); any other widget cell needs, as its
  next code cell, a ``widget-static`` cell storing an ``image/png`` (the book has none left), and
  every ``widget-static`` cell follows a widget cell;
- no stored output shows a raw widget repr (``VBox(children=…``, an object address): a
  widget's text form is the one line "… — run the page to use this player".
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from labkit.reader import PNG, show_source

REPO = Path(__file__).resolve().parents[1]


def stored_notebooks():
    return sorted(p for p in (REPO / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def static_problems(nb: dict, name: str) -> list[str]:
    """Every stored output of ``nb`` the static theme would show wrongly, by cell index."""
    problems = []
    for index, cell in enumerate(nb.get("cells", [])):
        for output in cell.get("outputs", []):
            data, metadata = output.get("data", {}), output.get("metadata", {})
            if "text/markdown" in data and "text/html" not in data:
                first = "".join(data.get("text/plain", ""))[:60]
                problems.append(
                    f"{name}: cell {index} stores text/markdown without text/html ({first!r}); "
                    "give the object a _repr_html_ and rebuild with make notebooks"
                )
            for mime, meta in metadata.items():
                if mime.startswith("image/") and isinstance(meta, dict) and {"width", "height"} & set(meta):
                    problems.append(
                        f"{name}: cell {index} sizes its {mime} by metadata, which the static "
                        "book ignores; use labkit.reader.PNG"
                    )
    return problems


@pytest.mark.parametrize("ipynb", stored_notebooks(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_stored_outputs_read_right_in_the_static_book(ipynb):
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    problems = static_problems(nb, ipynb.name) + fallback_problems(nb, ipynb.name)
    assert not problems, "\n".join(problems)


def test_every_page_that_shows_source_stores_its_html_form():
    pages = 0
    for ipynb in stored_notebooks():
        outputs = [o for c in json.loads(ipynb.read_text(encoding="utf-8"))["cells"] for o in c.get("outputs", [])]
        sources = [o for o in outputs if "".join(o.get("data", {}).get("text/plain", "")).startswith("# labkit.")]
        pages += bool(sources)
        for output in sources:
            assert 'class="labkit-source"' in "".join(output["data"].get("text/html", "")), ipynb.name
    assert pages >= 20, f"only {pages} pages store a show_source output"


def test_the_check_names_a_markdown_output_without_html_and_a_metadata_width():
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "outputs": [
                    {"output_type": "execute_result", "data": {"text/plain": "# labkit.x\n", "text/markdown": "`x`"}},
                    {
                        "output_type": "display_data",
                        "data": {"image/png": "iVBOR"},
                        "metadata": {"image/png": {"width": 384}},
                    },
                ],
            }
        ]
    }
    problems = static_problems(nb, "page.ipynb")
    assert len(problems) == 2 and "cell 0 stores text/markdown without text/html" in problems[0]
    assert "sizes its image/png by metadata" in problems[1]


def test_show_source_has_an_html_form_with_the_code():
    from labkit.nn import rms_norm

    view = show_source(rms_norm)
    page = view._repr_html_()
    assert page.startswith('<div class="labkit-source"><code>labkit.nn.norm.rms_norm</code><pre')
    assert "```" not in page and "mean" in page and page.count("\n") == view.source.count("\n")


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_png_is_shown_at_the_width_asked_for():
    image = PNG(_png(512, 256), width=384, alt="a <test>")
    page = image._repr_html_()
    assert 'width="384"' in page and 'height="192"' in page and 'alt="a &lt;test&gt;"' in page
    encoded = page.split("base64,", 1)[1].split('"', 1)[0]
    assert base64.b64decode(encoded) == image.data
    assert repr(image) == "PNG 512×256 px, shown 384×192"


@pytest.mark.parametrize(
    "data, width, message",
    [
        (b"GIF89a", 10, "data must be the bytes of a PNG file"),
        (None, 10, "data must be the bytes of a PNG file"),
        (_png(4, 4), 0, "width must be a positive number of pixels, got 0"),
        (_png(4, 4), 2.5, "width must be a positive number of pixels, got 2.5"),
    ],
)
def test_png_refuses_bad_input_by_name(data, width, message):
    with pytest.raises(ValueError, match=message):
        PNG(data, width=width)


# ---- widgets: every widget cell is a player the static book draws -------------------------
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _png_outputs(cell: dict) -> list[bytes]:
    found = []
    for output in cell.get("outputs", []):
        data = output.get("data", {}).get("image/png")
        if data is not None:
            found.append(base64.b64decode("".join(data) if isinstance(data, list) else data))
    return found


RAW_REPRS = ("children=(", "Box(children", " object at 0x", "Widget(")


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def repr_problems(nb: dict, name: str) -> list[str]:
    """Stored outputs whose text form is a raw widget repr."""
    problems = []
    for index, cell in enumerate(nb.get("cells", [])):
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain")
            text = "".join(text) if isinstance(text, list) else (text or "")
            if any(marker in text for marker in RAW_REPRS):
                problems.append(f"{name}: cell {index} stores a raw widget repr: {text[:60]!r}")
    return problems


def fallback_problems(nb: dict, name: str) -> list[str]:
    """Every broken rule of one notebook (``nb`` as parsed JSON), naming cell indices."""
    problems = repr_problems(nb, name)
    cells = nb.get("cells", [])
    code = [i for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    for position, index in enumerate(code):
        tags = _tags(cells[index])
        if "widget" in tags:
            if "nbval-ignore-output" not in tags:
                problems.append(f"{name}: widget cell {index} is not tagged nbval-ignore-output")
            after = cells[index + 1] if index + 1 < len(cells) else {}
            if after.get("cell_type") == "markdown" and "{anywidget}" in _source(after):
                if "remove-output" not in tags:
                    problems.append(f"{name}: widget cell {index} (a player) is not tagged remove-output")
                continue
            following = code[position + 1] if position + 1 < len(code) else None
            if following is None or "widget-static" not in _tags(cells[following]):
                problems.append(f"{name}: widget cell {index} is not followed by a code cell tagged widget-static")
                continue
            pngs = _png_outputs(cells[following])
            if not pngs:
                problems.append(
                    f"{name}: widget-static cell {following} (after widget cell {index}) stores no "
                    "image/png output; end it with plt.show() and rebuild with make notebooks"
                )
            elif not all(png.startswith(PNG_MAGIC) for png in pngs):
                problems.append(f"{name}: widget-static cell {following} stores an image/png that is not a PNG")
        if "widget-static" in tags:
            previous = code[position - 1] if position > 0 else None
            if previous is None or "widget" not in _tags(cells[previous]):
                problems.append(f"{name}: widget-static cell {index} does not follow a widget cell")
    return problems


def test_every_widget_of_the_book_is_a_player():
    """No page shows the static book a "kernel connection is required" note: each widget cell
    is followed by its player's {anywidget} directive (no kernel-only widget with a static twin)."""
    kernel_only = []
    for ipynb in stored_notebooks():
        cells = json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
        for index, cell in enumerate(cells):
            if cell.get("cell_type") == "code" and "widget" in _tags(cell):
                after = cells[index + 1] if index + 1 < len(cells) else {}
                if after.get("cell_type") != "markdown" or "{anywidget}" not in _source(after):
                    kernel_only.append(f"{ipynb.name}: cell {index}")
    assert kernel_only == [], f"widgets the static book cannot run: {kernel_only}"


# ---- the checker itself: each rule, broken on purpose, is reported ------------------------

_PNG = base64.b64encode(PNG_MAGIC + b"rest").decode()


def _code(source: str, tags=(), png: bool = False) -> dict:
    outputs = [{"output_type": "display_data", "data": {"image/png": _PNG}, "metadata": {}}] if png else []
    return {"cell_type": "code", "source": source, "metadata": {"tags": list(tags)}, "outputs": outputs}


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "source": text, "metadata": {}}


GOOD = [
    _code("import labkit"),
    _code("stepper", ("widget", "nbval-ignore-output")),
    _md("The static view:"),
    _code("draw(stepper)", ("widget-static",), png=True),
]


def test_a_widget_with_its_static_figure_passes():
    assert fallback_problems({"cells": GOOD}, "good.ipynb") == []


def test_a_static_cell_without_a_stored_png_is_reported():
    cells = GOOD[:3] + [_code("draw(stepper)", ("widget-static",))]
    assert fallback_problems({"cells": cells}, "x.ipynb") == [
        "x.ipynb: widget-static cell 3 (after widget cell 1) stores no image/png output; "
        "end it with plt.show() and rebuild with make notebooks"
    ]


def test_a_widget_without_a_static_cell_is_reported():
    cells = GOOD[:2] + [_code("print(1)")]
    assert fallback_problems({"cells": cells}, "x.ipynb") == [
        "x.ipynb: widget cell 1 is not followed by a code cell tagged widget-static"
    ]


def test_a_widget_last_on_the_page_is_reported():
    assert fallback_problems({"cells": GOOD[:2]}, "x.ipynb") == [
        "x.ipynb: widget cell 1 is not followed by a code cell tagged widget-static"
    ]


def test_a_widget_missing_nbval_ignore_output_is_reported():
    cells = [_code("stepper", ("widget",)), GOOD[3]]
    assert fallback_problems({"cells": cells}, "x.ipynb") == [
        "x.ipynb: widget cell 0 is not tagged nbval-ignore-output"
    ]


def test_a_static_cell_without_its_widget_is_reported():
    cells = [_code("import labkit"), GOOD[3]]
    assert fallback_problems({"cells": cells}, "x.ipynb") == [
        "x.ipynb: widget-static cell 1 does not follow a widget cell"
    ]


def test_a_png_output_that_is_not_a_png_is_reported():
    bad = _code("draw(stepper)", ("widget-static",))
    bad["outputs"] = [{"output_type": "display_data", "data": {"image/png": base64.b64encode(b"GIF89a").decode()}}]
    assert fallback_problems({"cells": GOOD[:2] + [bad]}, "x.ipynb") == [
        "x.ipynb: widget-static cell 2 stores an image/png that is not a PNG"
    ]


PLAYER = [
    _code("import labkit"),
    _code("stepper = decode_player()\nstepper", ("widget", "nbval-ignore-output", "remove-output")),
    _md('```{anywidget} ../../labkit/reader/players/decode.mjs\n{"data": {}}\n```'),
]


def test_a_player_followed_by_its_directive_passes():
    assert fallback_problems({"cells": PLAYER}, "good.ipynb") == []


def test_a_player_whose_kernel_output_would_show_in_the_static_book_is_reported():
    cells = [PLAYER[0], _code("stepper", ("widget", "nbval-ignore-output")), PLAYER[2]]
    assert fallback_problems({"cells": cells}, "x.ipynb") == [
        "x.ipynb: widget cell 1 (a player) is not tagged remove-output"
    ]


def test_a_stored_raw_widget_repr_is_reported():
    cell = _code("w", ("widget", "nbval-ignore-output"))
    cell["outputs"] = [
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {
                "text/plain": "VBox(children=(HBox(children=(Button(description='◀ back'",
                "application/vnd.jupyter.widget-view+json": {"model_id": "x"},
            },
        }
    ]
    problems = fallback_problems({"cells": [cell, GOOD[3]]}, "x.ipynb")
    assert problems == [
        "x.ipynb: cell 0 stores a raw widget repr: \"VBox(children=(HBox(children=(Button(description='◀ back'\""
    ]
