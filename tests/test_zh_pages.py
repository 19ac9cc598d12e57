"""The Chinese edition in this repository (``zh/``): a page for every English page, each with the
English page's code cells and stored outputs (the localised ones by their verdict or widget), a toc
that mirrors the English one, and a project that speaks Chinese and shares the English one's
plugins and bibliography."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from booklab.edits import book_pages
from booktools import book, edition, edition_book

REPO = Path(__file__).resolve().parents[1]
ZH = REPO / "zh"
PAGES = [page.relative_to(ZH).as_posix() for page in book_pages(ZH)] if ZH.is_dir() else []


def test_every_english_page_has_its_chinese_page():
    missing = edition_book.missing_pages(REPO, "zh")
    assert not missing, f"{len(missing)} English pages have no page in zh/: " + ", ".join(missing)


@pytest.mark.parametrize("page", PAGES)
def test_a_chinese_page_has_the_english_code_cells_and_stored_outputs(page):
    problems = edition_book.identity_problems(REPO, "zh", ZH / page)
    assert not problems, "\n".join(problems)


def test_the_chinese_toc_mirrors_the_english_one():
    assert edition_book.toc_mirror_problems(REPO, "zh") == []
    config = yaml.safe_load((ZH / "myst.yml").read_text(encoding="utf-8"))
    titles = [entry.get("title") for entry in config["project"]["toc"] if "title" in entry]
    assert titles and all(any("\u4e00" <= ch <= "\u9fff" for ch in title) for title in titles), titles


def test_the_chinese_project_speaks_chinese_and_shares_the_english_plugins_and_sources():
    assert (ZH / edition.MARKER).read_text(encoding="utf-8") == "zh\n"
    assert edition.editions(REPO) == ["zh"]
    config = yaml.safe_load((ZH / "myst.yml").read_text(encoding="utf-8"))
    english = book.load_config(REPO)
    assert "language" not in config["project"]  # mystmd 1.11 warns on it: the marker is the edition's language
    assert config["site"]["template"] == english["site"]["template"]
    for rel in config["project"]["bibliography"] + config["project"]["plugins"] + [config["site"]["options"]["style"]]:
        assert (ZH / rel).resolve().is_file(), rel
    shared = {Path(p).name for p in english["project"]["plugins"]}
    assert shared <= {Path(p).name for p in config["project"]["plugins"]}
    assert "zh/**" in english["project"]["exclude"]  # the English project never builds the Chinese pages


def test_a_broken_toc_mirror_is_named(tmp_path):
    (tmp_path / "zh").mkdir()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "myst.yml").write_text((REPO / "myst.yml").read_text("utf-8"), encoding="utf-8")
    config = yaml.safe_load((ZH / "myst.yml").read_text(encoding="utf-8"))
    config["project"]["toc"][1]["children"].pop(2)
    (tmp_path / "zh" / "myst.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    (problem,) = edition_book.toc_mirror_problems(tmp_path, "zh")
    assert "missing ['notebooks/07-traces/03-text-token-by-token.ipynb']" in problem


def test_explanatory_bullets_that_cite_on_one_line_are_no_hand_written_sources_list():
    """A Chinese paragraph stays on one line (a line break between two Chinese characters shows as a
    space), so a bullet's citation lands on its first line; a bold lead-in marks it as an explanation."""
    bullets = (
        "- **用哪个组。** 有些方案在整个批次上做标准化（REINFORCE++ {cite:p}`hu2025reinforcepp`）。\n"
        "- **是否要除。** “Dr. GRPO”的分析 {cite:p}`liu2025drgrpo` 认为这会带来偏差。\n"
    )
    assert book.hand_written_sources(bullets) == []
    listed = "- A. Author, *A Paper* {cite:p}`song2021ddim` — what it shows.\n- B. Author {cite:p}`ho2020ddpm`\n"
    assert book.hand_written_sources(listed) == ["- A. Author, *A Paper* {cite:p}`song2021ddim` — what it shows."]
