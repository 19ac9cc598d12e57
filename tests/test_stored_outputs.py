"""The numerical output policy (CONTRIBUTING.md, "Numbers in stored outputs"), as a lint.

Every float a stored notebook output shows must survive another CPU, BLAS kernel and thread
count: at most ``MAX_SIGNIFICANT_DIGITS`` significant digits (``labkit.reader.fmt`` prints a
float64 with 6, a float32 with 4 decimals; the chapter's own six-decimal figures, §7.8's DDIM
example and the trace's tensor values, reach 7 for a value of 1 or more).  A 16-digit ``repr`` in a stored output is the
last bits of one machine's run, and the next machine's nbval fails on it.  Cells tagged
``nbval-ignore-output`` are not compared by nbval and are not linted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from labkit.reader.numbers import FLOAT64_DIGITS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.ipynb"))
MAX_SIGNIFICANT_DIGITS = FLOAT64_DIGITS + 1

#: (notebook path relative to the repository, the number as printed) → why it may stay.
ALLOWED: dict[tuple[str, str], str] = {}

# A decimal number with a fraction (integers are exact and never flagged), optional exponent;
# not part of a longer token (versions like 3.11.7, identifiers like e00).
_NUMBER = re.compile(r"(?<![\w.])[-+]?(\d*)\.(\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def significant_digits(whole: str, fraction: str) -> int:
    digits = (whole + fraction).lstrip("0")
    return len(digits)


def _texts(output: dict) -> list[str]:
    texts = []
    if "text" in output:
        texts.append("".join(output["text"]) if isinstance(output["text"], list) else output["text"])
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime == "application/json":
            texts.append(
                "".join(value) if isinstance(value, list) else value if isinstance(value, str) else json.dumps(value)
            )
    return texts


def too_precise(notebook: Path, allowed=ALLOWED, limit: int = MAX_SIGNIFICANT_DIGITS) -> list[str]:
    """Every float in a stored output of ``notebook`` with more than ``limit`` significant digits,
    as ``"<notebook> cell N: <number>"`` lines (cells tagged nbval-ignore-output are skipped)."""
    try:
        rel = notebook.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        rel = notebook.name
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code" or "nbval-ignore-output" in cell.get("metadata", {}).get("tags", []):
            continue
        for output in cell.get("outputs", []):
            for text in _texts(output):
                for match in _NUMBER.finditer(text):
                    number = match.group(0)
                    if (
                        significant_digits(match.group(1), match.group(2)) > limit
                        and (rel, number.lstrip("+-")) not in allowed
                    ):
                        found.append(f"{rel} cell {index}: {number}")
    return found


def test_the_book_has_notebooks_to_lint():
    assert len(NOTEBOOKS) >= 20


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_outputs_show_no_machine_digits(notebook):
    found = too_precise(notebook)
    assert not found, (
        f"stored outputs show floats with more than {MAX_SIGNIFICANT_DIGITS} significant digits "
        "(print them through labkit.reader.fmt / rounded / fmt_bound, see CONTRIBUTING.md):\n" + "\n".join(found)
    )


def test_every_allow_list_entry_has_a_reason_and_is_still_needed():
    for (path, number), reason in ALLOWED.items():
        assert len(reason.split()) >= 4, f"{path} {number}: say why it may stay"
        hits = too_precise(ROOT / path, allowed={})
        assert any(h.endswith(": " + number) or h.endswith(": -" + number) for h in hits), (
            f"{path} no longer shows {number}: drop it from ALLOWED"
        )


def _notebook(tmp_path: Path, outputs: list[dict], tags=()) -> Path:
    cell = {
        "cell_type": "code",
        "metadata": {"tags": list(tags)},
        "source": "x",
        "outputs": outputs,
        "execution_count": 1,
    }
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_the_lint_catches_a_16_digit_float_added_to_a_stored_output(tmp_path):
    # The page-12 cache error exactly as one machine stored it before the policy.
    page = _notebook(
        tmp_path,
        [
            {
                "output_type": "stream",
                "name": "stdout",
                "text": ['"full_vs_cached_max_abs_logit_error": 4.440892098500626e-16,\n'],
            }
        ],
    )
    assert too_precise(page) == ["page.ipynb cell 0: 4.440892098500626e-16"]
    html = _notebook(
        tmp_path,
        [
            {
                "output_type": "execute_result",
                "execution_count": 1,
                "metadata": {},
                "data": {"text/html": "<td>0.2477276305125953</td>", "text/plain": "0.247728"},
            }
        ],
    )
    assert too_precise(html) == ["page.ipynb cell 0: 0.2477276305125953"]
    # 6 significant digits, integers, versions, IDs and the bound form all pass.
    ok = _notebook(
        tmp_path,
        [
            {
                "output_type": "stream",
                "name": "stdout",
                "text": ["0.598139 -1.1000 12345678901234567 3.11.7 e00 1e-12 ≤ 1e-12 ✓ 4.441e-16\n"],
            }
        ],
    )
    assert too_precise(ok) == []
    # A cell nbval does not compare is not linted; an allow-listed number passes.
    assert (
        too_precise(
            _notebook(
                tmp_path,
                [{"output_type": "stream", "name": "stdout", "text": ["0.2477276305125953"]}],
                tags=["nbval-ignore-output"],
            )
        )
        == []
    )
    assert too_precise(page, allowed={("page.ipynb", "4.440892098500626e-16"): "a reason"}) == []
