"""The Chinese edition's checks: every exercise has its Chinese texts, every template the checks can say
has a Chinese entry with the same fields, and the wrong answers of ``tests/test_check_*.py`` get Chinese
verdicts (``labkit.core.edition``: ``$LABKIT_LANG``, else the nearest ``.labkit-edition``)."""

import ast
import json
import os
import re
import string
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import labkit.check as check
from labkit.check import feedback
from labkit.core import edition
from tests import _words

ROOT = Path(__file__).resolve().parents[1]
ZH = tomllib.loads((ROOT / "labkit" / "check" / "zh.toml").read_text(encoding="utf-8"))
CJK = re.compile(r"[\u3400-\u9fff]")
#: an English phrase: three words of letters in a row (identifiers have underscores or dots, data is quoted)
PHRASE = re.compile(r"(?<![\w.])[A-Za-z]{2,}(?: [A-Za-z]{2,}){2}(?![\w.(])")


def _fields(template: str) -> set[str]:
    try:
        return {name for _, name, *_ in string.Formatter().parse(template) if name}
    except ValueError:  # no fields: braces are text
        return set()


def _english_left(text: str) -> list[str]:
    """English phrases in ``text`` outside quotes (“case labels”, 'words', `code`) — data stays as it is."""
    plain = re.sub(r"“[^”]*”|'[^']*'|`[^`]*`|\"[^\"]*\"|（[^）]*）|\([^)]*\)", "", text)
    plain = re.sub(r"(抛出了 \w+): .*", r"\1", plain)  # what the reader's own code raised says itself
    return PHRASE.findall(plain)


@pytest.fixture(autouse=True)
def fresh_language():
    edition.forget()
    yield
    edition.forget()


def test_every_exercise_has_its_chinese_texts_with_the_same_fields():
    found = feedback.exercise_texts("zh")
    for name, spec in check.exercises().items():
        for part in ("task", "idea", "rule", "why"):
            english = getattr(spec, part)
            if not english:
                continue
            chinese = found.get(name, {}).get(part)
            assert chinese and CJK.search(chinese), f"exercises.zh.toml: {name} has no Chinese {part}"
            if part == "why":  # the one text formatted (with the answer)
                assert _fields(chinese) == _fields(english), f"{name}.why: fields {_fields(english)} expected"
    assert set(found) <= set(check.exercises()), (
        f"exercises.zh.toml names unknown exercises: {set(found) - set(check.exercises())}"
    )


def test_every_template_the_checks_can_say_has_a_chinese_entry_with_the_same_fields():
    templates, unknown = _words.templates()
    assert not unknown, f"say() called on something the test cannot read: {unknown}"
    assert len(templates) > 200
    missing = sorted(t for t in templates if _words.needs_words(t) and t not in ZH)
    assert not missing, f"labkit/check/zh.toml lacks {len(missing)} templates, e.g. {missing[:5]}"
    for template in templates & set(ZH):
        assert _fields(ZH[template]) == _fields(template), f"zh.toml: {template!r} changes its fields"
    stale = sorted(set(ZH) - templates)
    assert not stale, f"zh.toml holds templates no check says any more: {stale[:5]}"


def test_no_check_builds_a_message_with_an_f_string():
    """A message built with an f-string has no template to look up: every message goes through say()."""
    calls = {"failure", "passed", "CandidateProblem", "NotAttempted"}
    for path in _words.SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in calls:
                shown = node.args[:1] + [k.value for k in node.keywords if k.arg in ("where", "rule", "hint")]
                bare = [
                    ast.unparse(a)
                    for a in shown
                    if isinstance(a, ast.JoinedStr) or (isinstance(a, ast.Constant) and a.value)
                ]
                assert not bare, f"{path.name}:{node.lineno}: {bare} is not said through say()"


def test_the_language_comes_from_the_variable_then_the_nearest_edition_file(tmp_path, monkeypatch):
    monkeypatch.delenv("LABKIT_LANG", raising=False)
    page = tmp_path / "zh" / "notebooks" / "07-traces"
    page.mkdir(parents=True)
    monkeypatch.chdir(page)
    assert edition.language() == "en"
    (tmp_path / "zh" / ".labkit-edition").write_text("zh\n", encoding="utf-8")
    edition.forget()
    assert edition.language() == "zh"
    monkeypatch.setenv("LABKIT_LANG", "en")
    assert edition.language() == "en"
    monkeypatch.setenv("LABKIT_LANG", "fr")
    with pytest.raises(ValueError, match=r"\$LABKIT_LANG must be one of \['en', 'zh'\]"):
        edition.language()
    monkeypatch.delenv("LABKIT_LANG")
    (tmp_path / "zh" / ".labkit-edition").write_text("chinese\n", encoding="utf-8")
    edition.forget()
    with pytest.raises(ValueError, match=r"\.labkit-edition must hold one line, one of"):
        edition.language()


def test_a_verdict_reads_in_chinese_and_in_english(monkeypatch):
    check.core.reset_attempts()
    monkeypatch.setenv("LABKIT_LANG", "zh")
    result = check.exercises()["rms_norm_row"](9.0)
    text = repr(result) + result._repr_html_() + repr(result.more())
    assert CJK.search(result.message) and "你的值" in text and "思路" in text
    assert check.exercises()["rms_norm_row"].text("idea") in text
    assert not _english_left(text), _english_left(text)
    monkeypatch.setenv("LABKIT_LANG", "en")
    assert "your value" in repr(check.exercises()["rms_norm_row"](9.0))
    check.core.reset_attempts()


@pytest.mark.slow
def test_the_wrong_answers_of_the_check_tests_get_chinese_verdicts(tmp_path):
    """Every verdict the wrong answers of tests/test_check_*.py get, the kit in Chinese: its message and
    idea Chinese, no English phrase left in any of its lines (case labels and quoted data aside)."""
    out = tmp_path / "verdicts.jsonl"
    env = {**os.environ, "LABKIT_LANG": "zh", "LABKIT_VERDICTS": str(out)}
    files = sorted(str(p) for p in (ROOT / "tests").glob("test_check_*.py") if p.name != "test_check_zh.py")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests._zh_verdicts",
            "-p",
            "no:cacheprovider",
            "-x",
            "--co",
            *files,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=True,
    )  # the files collect
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests._zh_verdicts", "-p", "no:cacheprovider", "-n", "2", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
    )  # their English assertions fail here: only the verdicts are read
    verdicts = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    book = check.exercises()  # the tests' own made-up exercises aside
    judged = [
        v
        for v in verdicts
        if v["status"] in ("failed", "not attempted") and v["lang"] == "zh" and v["exercise"] in book
    ]
    assert len(judged) > 150, len(judged)
    english = []
    for verdict in judged:
        if not CJK.search(verdict["message"]):
            english.append((verdict["exercise"], "message", verdict["message"]))
        for part in ("message", "where", "rule", "hint", "concept"):
            left = _english_left(verdict[part] or "")
            if left:
                english.append((verdict["exercise"], part, verdict[part]))
    assert not english, f"{len(english)} verdict lines still English, e.g. " + "\n".join(map(str, english[:40]))
