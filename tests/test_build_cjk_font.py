"""A page regenerated on a machine without a CJK font stored its figures with every token as □ (the
plot style stays quiet when no such font is installed, so nothing said so): the build refuses first."""

from pathlib import Path

import booktools.__main__ as devtools

ROOT = Path(__file__).resolve().parents[1]


def test_the_build_refuses_to_run_without_a_cjk_font(monkeypatch, capsys):
    monkeypatch.setattr(devtools, "find_cjk_font", lambda: None)
    page = ROOT / "notebooks" / "11-labs" / "01-cross-entropy-gradient.md"
    assert devtools.build_pages(ROOT, [page], prose=False) == 2
    assert "fonts-wqy-microhei" in capsys.readouterr().err
