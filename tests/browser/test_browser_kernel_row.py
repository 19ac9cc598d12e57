"""A player's "compute" with empty or invalid input says what is wrong in the player, not only in
JupyterLab's hidden log (issue 47, first hour): ``_shared.mjs``'s kernel row, in Chromium, with a
model that records what it is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
SHARED = Path(__file__).resolve().parents[2] / "labkit" / "reader" / "players" / "_shared.mjs"

ROW = """async (source) => {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const { kernelRow, h } = await import(url);
  const listeners = {};
  const model = {
    asked: [], values: { live: true, error: null },
    get(k) { return this.values[k]; }, set(k, v) { this.values[k] = v; if (k === "request") this.asked.push(v); },
    save_changes() {}, on(e, f) { listeners[e] = f; },
  };
  const typed = h("input", { type: "text" });
  const row = kernelRow(model, "another group", { rewards: typed },
                        () => ({ rewards: typed.value.trim().split(/[\\s,]+/).map(Number) }));
  document.body.append(row);
  const button = row.querySelector("button");
  const error = () => row.querySelector("[data-role=error]").textContent;
  const seen = {};
  button.click(); seen.empty = [error(), model.asked.length];
  typed.value = "0.2 x 0.9"; button.click(); seen.invalid = [error(), model.asked.length];
  typed.value = "0.2 0.5 0.9"; button.click(); seen.valid = [error(), model.asked.length];
  model.values.error = "rewards must hold two numbers or more"; listeners["change:error"]();
  seen.kernel = [error(), row.querySelector("[data-role=error]").getAttribute("role")];
  return seen;
}"""


def test_compute_with_empty_or_invalid_input_says_so_in_the_player(browser):
    page = browser.new_page()
    try:
        page.set_content("<!doctype html><html><body></body></html>")
        seen = page.evaluate(ROW, SHARED.read_text(encoding="utf-8"))
    finally:
        page.close()
    assert seen["empty"] == ["give rewards a value", 0], seen
    assert seen["invalid"][1] == 0 and "not a number" in seen["invalid"][0], seen
    assert seen["valid"] == ["", 1], seen
    assert seen["kernel"] == ["rewards must hold two numbers or more", "alert"], seen


def test_the_kernel_row_speaks_the_editions_language(browser):
    """In the Chinese edition the row's own words are Chinese; what the kernel said stays as it said it
    (it names the argument), framed in Chinese."""
    source = SHARED.read_text(encoding="utf-8").replace("const LANG = null;", 'const LANG = "zh";')
    page = browser.new_page()
    try:
        page.set_content("<!doctype html><html><body></body></html>")
        seen = page.evaluate(ROW, source)
    finally:
        page.close()
    assert seen["empty"] == ["请给 rewards 一个值", 0], seen
    assert seen["invalid"][1] == 0 and "不是数" in seen["invalid"][0], seen
    assert seen["kernel"] == ["内核无法计算：rewards must hold two numbers or more", "alert"], seen
