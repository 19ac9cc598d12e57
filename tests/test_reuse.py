"""The book as a work people can cite and reuse: its licences (the code's and the prose's, and
README saying which covers what), CITATION.cff, the version and the CHANGELOG agreeing."""

from __future__ import annotations

import datetime
import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
#: CITATION.cff 1.2.0: the keys a file must have, and what each author needs (a name)
CFF_REQUIRED = ("cff-version", "message", "title", "authors")


def _version() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def _citation() -> dict:
    # dates as written (a YAML date would be read as datetime.date)
    return yaml.load((REPO / "CITATION.cff").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def test_the_code_is_mit_and_the_prose_cc_by_sa_each_in_its_licence_file():
    code = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert code.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in code
    prose = (REPO / "LICENSE-TEXT").read_text(encoding="utf-8")
    assert prose.startswith("Attribution-ShareAlike 4.0 International")
    assert "Section 3 -- License Conditions." in prose and len(prose) > 15_000  # the whole legal code
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and "LICENSE" in project["license-files"]
    myst = yaml.safe_load((REPO / "myst.yml").read_text(encoding="utf-8"))["project"]
    assert myst["license"] == {"content": "CC-BY-SA-4.0", "code": "MIT"}


def test_readme_says_which_licence_covers_what_and_how_to_cite():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Licence and citation", 1)[1].split("\n## ", 1)[0]
    for words in ("LICENSE-TEXT", "CC BY-SA 4.0", "LICENSE", "MIT", "labkit/", "notebooks/", "CITATION.cff"):
        assert words in section, words
    assert "@book{" in section and f"version = {{{_version()}}}" in section


def test_citation_cff_has_the_required_keys_and_the_release():
    cff = _citation()
    missing = [key for key in CFF_REQUIRED if key not in cff]
    assert missing == [], f"CITATION.cff lacks {missing}"
    assert cff["cff-version"] == "1.2.0"
    assert cff["authors"] and all(a.get("name") or a.get("family-names") for a in cff["authors"])
    assert set(cff["license"]) == {"MIT", "CC-BY-SA-4.0"}
    assert cff["version"] == _version()
    datetime.date.fromisoformat(cff["date-released"])
    preferred = cff["preferred-citation"]
    assert preferred["type"] == "book" and preferred["title"] == cff["title"] and preferred["authors"]
    assert preferred["edition"] == cff["version"] and preferred["year"] == cff["date-released"][:4]


def test_the_changelog_latest_release_is_the_version_and_the_citations_date():
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] — (\d{4}-\d{2}-\d{2})$", text, re.M)
    assert releases, "CHANGELOG.md has no release heading '## [X.Y.Z] — YYYY-MM-DD'"
    version, date = releases[0]
    assert version == _version(), f"CHANGELOG's latest release {version} is not pyproject's {_version()}"
    assert date == _citation()["date-released"]
    dates = [datetime.date.fromisoformat(d) for _, d in releases]
    assert dates == sorted(dates, reverse=True), "releases newest first"
