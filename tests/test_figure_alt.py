"""Every figure a page stores says what it shows (issue 47: 20 of 21 figures had the alt text
"<Figure size 750x340 with 1 Axes>", matplotlib's repr): its text/plain — the alt text the static book's
theme gives an image output — and its HTML ``<img alt>`` are the description written with the figure."""

import json
import re
from pathlib import Path

import pytest

from labkit.reader import Chart, show_figure
from labkit.reader.style import plt

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "notebooks").rglob("*.ipynb"))


def _images(page: Path):
    for index, cell in enumerate(json.loads(page.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data or "<img" in "".join(data.get("text/html", "")):
                yield index, data


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_stored_figure_says_what_it_shows(page):
    for index, data in _images(page):
        alt = "".join(data.get("text/plain", ""))
        if "image/png" in data:  # the theme's alt for an image output is its text/plain
            assert len(alt.split()) >= 8 and not alt.startswith("<Figure"), (
                f"{page.name} cell {index}: the figure's text alternative is {alt[:60]!r}, not a description"
            )
        html = "".join(data.get("text/html", ""))
        if html:
            found = re.search(r'<img [^>]*alt="([^"]+)"', html)
            assert found and len(found.group(1).split()) >= 8, f"{page.name} cell {index}: <img> without a real alt"


def test_show_figure_refuses_a_repr_or_an_empty_description():
    pyplot = plt()
    for alt in ("", "   ", "<Figure size 640x480 with 1 Axes>", None):
        with pytest.raises(ValueError, match="alt"):
            show_figure(alt, pyplot.figure())
    pyplot.close("all")


def test_a_chart_carries_its_description_in_every_form():
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(2, 1), dpi=50)
    ax.plot([0, 1], [0, 1])
    chart = show_figure("A rising  line,\n from (0, 0) to (1, 1).", fig)
    assert isinstance(chart, Chart) and repr(chart) == "A rising line, from (0, 0) to (1, 1)."
    assert chart._repr_png_().startswith(b"\x89PNG")
    assert 'alt="A rising line, from (0, 0) to (1, 1)."' in chart._repr_html_()
    assert not pyplot.get_fignums(), "the figure stays open and the cell would show it twice"


def _alts_in_pages() -> list[tuple[str, str]]:
    import ast

    import jupytext

    found = []
    for md in sorted((ROOT / "notebooks").rglob("*.md")):
        for cell in jupytext.read(md).cells:
            if cell.cell_type != "code" or "show_figure(" not in cell.source:
                continue
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_figure":
                    found.append((md.name, " ".join(node.args[0].value.split())))
    return found


def test_every_figure_has_its_description_in_chinese():
    import tomllib

    catalogue = tomllib.loads((ROOT / "labkit" / "reader" / "zh.toml").read_text(encoding="utf-8"))
    alts = _alts_in_pages()
    assert len(alts) >= 20, alts
    missing = [(page, alt[:50]) for page, alt in alts if not re.search("[\u4e00-\u9fff]", catalogue.get(alt, ""))]
    assert not missing, f"figures without a Chinese description in labkit/reader/zh.toml: {missing}"
    stale = set(catalogue) - {alt for _, alt in alts}
    assert not stale, f"labkit/reader/zh.toml describes figures no page draws: {[s[:50] for s in stale]}"


def test_the_chinese_edition_shows_the_chinese_description(monkeypatch):
    from labkit.core import edition

    page, alt = _alts_in_pages()[0]
    monkeypatch.setenv("LABKIT_LANG", "zh")
    edition.forget()
    pyplot = plt()
    chart = show_figure(alt, pyplot.figure(figsize=(1, 1), dpi=20))
    assert re.search("[\u4e00-\u9fff]", repr(chart)) and 'class="labkit-figure"' in chart._repr_html_(), page
