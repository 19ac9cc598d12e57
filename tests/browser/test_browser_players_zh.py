"""The players of the Chinese edition, in the static harness: every bundle served speaking zh (its
``const LANG``, the data unchanged), each player drawn, stepped to its end and every control moved,
with no English word left in what it shows or says (text, aria labels, text alternatives, the
live region, tooltips — ``tests/_players_zh.py`` allows data, code and the source's kept terms);
and the a11y, contrast and column checks of the English players pass in Chinese too (Chinese text is
wider: the 725-px column and the 390-px phone)."""

from __future__ import annotations

import pytest
import test_browser_players as layout
import test_browser_players_a11y as a11y
from player_controls import embed_key, every_control_changes_the_drawing
from player_harness import HarnessServer, directive, embeds, speaking

from booktools import players
from tests._players_zh import data_words, english_left

pytestmark = pytest.mark.browser

EMBEDS = embeds()
IDS = [embed_key(page, name) for page, name in EMBEDS]

#: every text the player shows or says: text nodes (not its CSS), and the attributes a reader meets
JS_TEXTS = """() => {
  const root = window.playerEl.querySelector('.lk-player'), out = [];
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.parentElement.closest('style') && n.textContent.trim()) out.push(n.textContent.trim());
  }
  for (const el of root.querySelectorAll('*')) {
    for (const a of ['aria-label', 'placeholder', 'alt', 'title']) if (el.getAttribute(a)) out.push(el.getAttribute(a));
  }
  return {lang: root.getAttribute('lang'), texts: out};
}"""


@pytest.fixture(scope="module")
def harness():
    with HarnessServer(lang="zh") as server:
        yield server


@pytest.fixture()
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN", timezone_id="UTC")
    ctx.add_init_script(a11y.JS_CANVAS_INK)
    ctx.add_init_script(layout.JS_CANVAS_TEXT)
    yield ctx
    ctx.close()


def shown(page) -> tuple[str, set[str]]:
    found = page.evaluate(JS_TEXTS)
    return found["lang"], set(found["texts"])


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_player_speaks_chinese_in_every_state(context, harness, page_md, name):
    page, errors = layout.open_player(context, harness, page_md, name)
    known = data_words(players.module_data(directive(page_md, name)["text"]))
    lang, texts = shown(page)
    page.evaluate("() => window.playerEl.querySelector('.lk-player').focus()")
    page.keyboard.press("End")
    texts |= shown(page)[1]
    every_control_changes_the_drawing(page)
    texts |= shown(page)[1]
    left = {text: words for text in sorted(texts) if (words := english_left(text, known))}
    assert left == {}, f"{name}: English left in {len(left)} texts:\n" + "\n".join(
        f"{w}: {t!r}" for t, w in left.items()
    )
    assert lang == "zh-Hans", f"{name}: the player's root says lang={lang!r}"
    assert errors == [], f"{name}: console errors: {errors}"


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_player_in_chinese_is_named_announced_described_and_readable(context, harness, page_md, name):
    a11y.test_player_is_named_announced_described_and_readable(context, harness, page_md, name)


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_player_in_chinese_fits_the_text_column_and_the_phone(context, harness, page_md, name):
    layout.test_player_fits_the_text_column_with_no_text_under_11px(context, harness, page_md, name)


def test_the_harness_serves_a_bundle_in_the_language_asked_and_the_check_sees_english(context, harness):
    """The check itself: the zh harness's bundle says zh with the English one's data; an English label
    put into the drawn player is reported, a token string of the data is not."""
    page_md, name = EMBEDS[0]
    text = directive(page_md, name)["text"]
    assert 'const LANG = "zh";' in speaking(text, "zh") and players.module_data(speaking(text, "zh")) == (
        players.module_data(text)
    )
    page, _ = layout.open_player(context, harness, page_md, name)
    page.evaluate("""() => { const root = window.playerEl.querySelector('.lk-player');
      root.append(Object.assign(document.createElement('div'), {textContent: 'selection step 3 of 9'})); }""")
    left = [words for text in shown(page)[1] if (words := english_left(text))]
    assert ["of", "selection", "step"] in left, left
