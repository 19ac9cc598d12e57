"""The book's spine: import cost, the CLI, fixtures, notebook pairing, the toc, and tampering.

Each tampering test damages a copy of the book and shows that the suite's own checks fail.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from booktools import book, notebooks
from booktools import fixture_files as files
from labkit.core import fixtures

REPO = Path(__file__).resolve().parents[1]

NBVAL_ARGS = [
    "--nbval",
    "--nbval-current-env",
    "--nbval-sanitize-with",
    str(REPO / "tests" / "nbval_sanitize.cfg"),
    "-p",
    "no:cacheprovider",
    "-q",
]


@pytest.mark.slow
def test_import_labkit_is_fast_and_light():
    code = (
        "import sys, time; t = time.perf_counter(); import labkit, labkit.cli; "
        "d = time.perf_counter() - t; "
        "heavy = [m for m in ('matplotlib', 'ipywidgets', 'IPython', 'jupyter_client', 'numpy') if m in sys.modules]; "
        "print(d, heavy)"
    )
    best = min(
        float(
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()[0]
        )
        for _ in range(3)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "[]" in out, f"import labkit pulled in heavy modules: {out}"
    assert best < 0.3, f"import labkit took {best:.3f} s (limit 0.3 s)"


def test_cli_help_lists_commands():
    out = subprocess.run([sys.executable, "-m", "labkit", "--help"], capture_output=True, text=True, check=True)
    assert "fixtures" in out.stdout and "usage: labkit" in out.stdout


def test_cli_reports_bad_input_clearly():
    proc = subprocess.run(
        [sys.executable, "-m", "labkit", "fixtures", "check", "--only", "nope"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unknown recipe 'nope'" in proc.stderr


def test_every_registered_recipe_exists_and_labs_has_none():
    """`--only labs` once died with ModuleNotFoundError: every registry entry must import."""
    from booktools import fixtures as recipes

    found = recipes.recipes()
    assert set(found) == {"text", "diffusion", "tools"}, sorted(found)
    for name, build in found.items():
        assert callable(build), name
    proc = subprocess.run(
        [sys.executable, "-m", "labkit", "fixtures", "check", "--only", "labs"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unknown recipe 'labs'" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_fixtures_match_their_recipes():
    """Every recipe (text, diffusion, tools: their weights, tokenizers and golden traces) rebuilds
    its fixtures byte for byte; the tools recipe also refuses weights that miss a summary case."""
    from booktools import fixtures as recipes

    problems = files.check(recipes.recipes())
    assert not problems, "fixtures differ from their recipes:\n" + "\n".join(problems)


def test_deterministic_npz_and_clear_error_on_corruption(tmp_path):
    import numpy as np

    arrays = {"b": np.arange(3, dtype=np.int32), "a": np.ones((2, 2), dtype=np.float32)}
    first = files.save_arrays(tmp_path / "one.npz", arrays).read_bytes()
    time.sleep(1.1)
    assert files.save_arrays(tmp_path / "two.npz", arrays).read_bytes() == first
    broken = tmp_path / "broken.npz"
    broken.write_bytes(first[: len(first) // 2])
    with pytest.raises(ValueError, match="corrupted"):
        fixtures.load_arrays(broken)


def test_every_notebook_pair_is_in_step():
    problems = notebooks.check_pairs(REPO)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_toc_is_complete_and_every_page_parses_offline():
    problems = book.check(REPO)
    assert not problems, "\n".join(problems)


# --- tampering: each damage must be caught ---------------------------------------------


@pytest.fixture
def book_copy(tmp_path):
    """A copy of the book's pages and config to damage."""
    shutil.copytree(REPO / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(REPO / "myst", tmp_path / "myst")
    shutil.copy(REPO / "myst.yml", tmp_path / "myst.yml")
    shutil.copy(REPO / "references.bib", tmp_path / "references.bib")
    return tmp_path


def append_to_first_page(book_copy, markdown: str) -> None:
    """Append ``markdown`` to the first cell of the copy's first trace page (the .ipynb the book builds)."""
    ipynb = book_copy / "notebooks" / "07-traces" / "01-trace-record.ipynb"
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    nb["cells"][0]["source"].append(markdown)
    ipynb.write_text(json.dumps(nb), encoding="utf-8")


@pytest.mark.slow
def test_editing_a_md_cell_without_regenerating_is_caught(book_copy):
    md = book_copy / "notebooks" / "07-traces" / "01-trace-record.md"
    assert not notebooks.pair_problems(md)
    md.write_text(md.read_text(encoding="utf-8").replace('prefix="e")', 'prefix="x")', 1), encoding="utf-8")
    assert any("differs in its source" in p for p in notebooks.pair_problems(md))


@pytest.mark.slow
def test_an_unexecuted_notebook_is_caught(book_copy):
    ipynb = book_copy / "notebooks" / "07-traces" / "01-trace-record.ipynb"
    nb = nbformat.read(ipynb, as_version=4)
    nb.cells[1].execution_count = None
    nbformat.write(nb, ipynb)
    assert any("never executed" in p for p in notebooks.pair_problems(ipynb.with_suffix(".md")))


@pytest.mark.slow
def test_a_broken_toc_entry_is_caught(book_copy):
    config = (book_copy / "myst.yml").read_text(encoding="utf-8")
    (book_copy / "myst.yml").write_text(
        config.replace("01-trace-record.ipynb", "01-trace-recrod.ipynb"), encoding="utf-8"
    )
    problems = book.toc_problems(book_copy)
    assert any("points nowhere" in p for p in problems)
    assert any("missing from the toc" in p for p in problems)


def test_every_citation_resolves_and_the_pages_cite_something():
    assert not book.citation_problems(REPO), "\n".join(book.citation_problems(REPO))
    keys, problems = book.bibliography_keys(REPO)
    assert not problems and len(keys) >= 18, (problems, sorted(keys))
    cited = set()
    for md in (REPO / "notebooks").rglob("*.md"):
        cited.update(book.cited_keys(md.read_text(encoding="utf-8")))
    assert cited == keys, (
        f"cited but not listed: {sorted(cited - keys)}; listed but never cited: {sorted(keys - cited)}"
    )


def test_every_chapter_page_cites_a_primary_source():
    chapters = [REPO / "notebooks" / "07-traces", REPO / "notebooks" / "11-labs"]
    pages = [page for chapter in chapters for page in sorted(chapter.glob("*.md"))]
    assert len(pages) >= 25, [page.name for page in pages]
    uncited = [str(page.relative_to(REPO)) for page in pages if not book.cited_keys(page.read_text(encoding="utf-8"))]
    assert uncited == [], f"chapter pages that cite nothing: {uncited}"
    checked = {Path(rel).with_suffix(".md") for rel in book.chapter_files(book.load_config())}
    assert {page.relative_to(REPO) for page in pages} <= checked, "the book check must cover every chapter page"


@pytest.mark.slow
def test_a_chapter_page_that_cites_nothing_is_caught(book_copy):
    ipynb = book_copy / "notebooks" / "07-traces" / "01-trace-record.ipynb"
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = [line.replace("{cite:p}", "").replace("{cite:t}", "") for line in cell["source"]]
    ipynb.write_text(json.dumps(nb), encoding="utf-8")
    problems = book.citation_problems(book_copy)
    assert len(problems) == 1 and "01-trace-record" in problems[0], problems
    assert "cites no primary source" in problems[0], problems


@pytest.mark.slow
def test_a_broken_cross_reference_and_an_unknown_citation_key_are_caught(book_copy, monkeypatch):
    append_to_first_page(book_copy, "\n\nSee [the missing section](#no-such-label).\n")
    append_to_first_page(book_copy, "\n\nAs shown by {cite:p}`song2021ddim; nosuchpaper2099`.\n")
    problems = book.citation_problems(book_copy)
    assert len(problems) == 1 and "nosuchpaper2099" in problems[0] and "01-trace-record" in problems[0], problems
    found = book.myst_problems(book_copy)  # one mystmd run sees both damages
    assert any("no-such-label" in p for p in found), found
    assert any("nosuchpaper2099" in p for p in found), found  # mystmd agrees with the citation check
    monkeypatch.setattr(book, "myst_problems", lambda root=None: [])  # mystmd has spoken: the check's own rule
    assert any("nosuchpaper2099" in p for p in book.check(book_copy))


def test_no_page_lists_its_sources_by_hand_beside_its_references():
    """The site renders each page's References from its citations: no page that cites also has a
    hand-written list of sources (a "Primary sources" heading, or list items that each cite)."""
    for md in sorted((REPO / "notebooks").rglob("*.md")):
        text = md.read_text(encoding="utf-8")
        if book.cited_keys(text):
            assert book.hand_written_sources(text) == [], md.relative_to(REPO)
    listed = "- A. Author, *A Paper* {cite:p}`song2021ddim` — what it shows.\n- B. Author {cite:p}`ho2020ddpm`\n"
    assert book.hand_written_sources(f"## Primary sources\n\n{listed}") == [
        "## Primary sources",
        "- A. Author, *A Paper* {cite:p}`song2021ddim` — what it shows.",
    ]
    assert book.hand_written_sources("## Sources of nondeterminism\n\n- one {cite:p}`ho2020ddpm` cited\n") == []


@pytest.mark.slow
def test_a_hand_written_sources_list_is_caught(book_copy):
    append_to_first_page(book_copy, "\n\n## References\n\nDDIM {cite:p}`song2021ddim`.\n")
    problems = book.citation_problems(book_copy)
    assert len(problems) == 1 and "01-trace-record" in problems[0] and "by hand" in problems[0], problems


@pytest.mark.slow
def test_a_missing_bibliography_file_is_caught(book_copy):
    (book_copy / "references.bib").unlink()
    assert any("does not exist" in p for p in book.citation_problems(book_copy))


@pytest.mark.slow
def test_hand_editing_a_stored_number_fails_nbval(book_copy):
    ipynb = book_copy / "notebooks" / "07-traces" / "01-trace-record.ipynb"
    nb = nbformat.read(ipynb, as_version=4)
    for cell in nb.cells:
        outputs = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream"]
        if outputs and "round trip equal" in outputs[0]["text"]:
            outputs[0]["text"] = outputs[0]["text"].replace("4 lines", "5 lines")
            break
    else:
        pytest.fail("the stored output to tamper with was not found")
    nbformat.write(nb, ipynb)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *NBVAL_ARGS, str(ipynb)], capture_output=True, text=True, cwd=ipynb.parent
    )
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "5 lines" in proc.stdout and "4 lines" in proc.stdout


@pytest.mark.slow
def test_the_booktools_entry_point_says_where_it_looks_outside_a_book(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # booktools runs from the clone, here from elsewhere
    proc = subprocess.run(
        [sys.executable, "-m", "booktools", "check"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2 and str(tmp_path) in proc.stderr and "myst.yml" in proc.stderr, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "booktools", "build", "--book", str(REPO), "notebooks/nope.md"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "nope.md" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_the_devtools_check_gathers_pairs_glossary_links_and_the_book(book_copy, monkeypatch):
    from booktools import __main__ as devtools

    monkeypatch.setattr(book, "check", lambda root: ["a book problem"])
    assert devtools.check(book_copy) == ["book: a book problem"]
    md = book_copy / "notebooks" / "07-traces" / "01-trace-record.md"
    text = md.read_text(encoding="utf-8").replace("[event envelope](", "[{abbr}`event envelope (x)`](", 1)
    md.write_text(text, encoding="utf-8")
    problems = devtools.check(book_copy)
    assert any(p.startswith("notebooks: 01-trace-record.md: cell") for p in problems), problems
    assert any(p.startswith("glossary: notebooks/07-traces/01-trace-record.md:") for p in problems), problems


@pytest.mark.slow
def test_a_page_imports_benchmarks_from_the_clone_and_nothing_else_of_it(tmp_path):
    """benchmarks/ is not installed: page 13 imports it from the book's folder, which stays off sys.path."""
    code = (
        "from labkit.core.fixtures import import_from_book; m = import_from_book('benchmarks'); "
        "import benchmarks.stats; print(m.__file__, flush=True); import solutions"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO / "notebooks" / "11-labs", capture_output=True, text=True
    )
    assert proc.stdout.strip() == str(REPO / "benchmarks" / "__init__.py"), proc.stderr
    assert proc.returncode == 1 and "No module named 'solutions'" in proc.stderr, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-c", "from labkit.core.fixtures import import_from_book; import_from_book('benchmarks')"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "FileNotFoundError" in proc.stderr and str(tmp_path) in proc.stderr


def test_the_fixtures_are_package_data_and_only_a_clone_is_rebuilt(tmp_path, monkeypatch):
    """``labkit/fixtures`` links to the clone's ``fixtures/`` (a checkout without symlinks keeps the
    link as a file naming its target); ``fixtures build`` writes only into a clone or LABKIT_FIXTURES."""
    (tmp_path / "fixtures").mkdir()
    package = tmp_path / "labkit"
    package.mkdir()
    (package / "fixtures").write_text("../fixtures\n", encoding="utf-8")
    import importlib.resources

    monkeypatch.setattr(importlib.resources, "files", lambda name: package)
    monkeypatch.delenv("LABKIT_FIXTURES", raising=False)
    assert fixtures.fixtures_root() == (tmp_path / "fixtures").resolve()
    with pytest.raises(FileNotFoundError, match="LABKIT_FIXTURES"):
        files.writable_fixtures_root()  # no pyproject.toml beside it: not a clone
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    assert files.writable_fixtures_root() == (tmp_path / "fixtures").resolve()
    monkeypatch.setenv("LABKIT_FIXTURES", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="nowhere"):
        fixtures.fixtures_root()


def test_a_class_copy_keeps_the_fixtures_link(tmp_path):
    from classroom.classcopy import class_copy

    class_copy(REPO, tmp_path / "copy")
    link = tmp_path / "copy" / "labkit" / "fixtures"
    assert link.is_symlink() and (link / "traces" / "text.jsonl").is_file()
