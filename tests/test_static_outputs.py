"""What the static book can show of a stored output.

The static site's theme shows a ``text/markdown`` output as raw Markdown (fences and
backticks visible) and ignores an image's ``width`` metadata. So, in every stored ``.ipynb``:
- an output with ``text/markdown`` (every ``show_source``) carries a ``text/html`` form too;
- no image output relies on ``width``/``height`` metadata (``labkit.reader.images.PNG`` puts the
  width into an ``<img width>`` instead).
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from labkit.reader import show_source
from labkit.reader.images import PNG

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
                        "book ignores; use labkit.reader.images.PNG"
                    )
    return problems


@pytest.mark.parametrize("ipynb", stored_notebooks(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_stored_outputs_read_right_in_the_static_book(ipynb):
    problems = static_problems(json.loads(ipynb.read_text(encoding="utf-8")), ipynb.name)
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
