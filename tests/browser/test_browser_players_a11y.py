"""The players with a screen reader, the keyboard and low vision, in the static harness: the
player's group is named by its title; a step is announced in a polite live region; every
drawing is an image with a name and a text description; every text (SVG, HTML, canvas) has
WCAG AA contrast (≥ 4.5:1) against what is drawn under it, at the first and at the last step;
Home/End move the same control the arrows move."""

from __future__ import annotations

import pytest
from player_a11y import JS_A11Y, JS_CANVAS_INK, JS_CONTRAST, JS_VALUES
from player_controls import embed_key, press
from player_harness import HarnessServer, embeds
from test_browser_players import open_player

pytestmark = pytest.mark.browser

EMBEDS = embeds()
IDS = [embed_key(page, name) for page, name in EMBEDS]
AA = 4.5


@pytest.fixture(scope="module")
def harness():
    with HarnessServer() as server:
        yield server


@pytest.fixture()
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US", timezone_id="UTC")
    ctx.add_init_script(JS_CANVAS_INK)
    yield ctx
    ctx.close()


def moved(page, key: str) -> tuple[bool, set[str]]:
    """Press ``key`` on the player itself: whether the drawing changed, and the sliders and pickers
    whose value it changed."""
    page.evaluate("() => window.playerEl.querySelector('.lk-player').focus()")
    before = page.evaluate(JS_VALUES)
    changed = press(page, key)
    after = page.evaluate(JS_VALUES)
    return changed, {name for name in after if before.get(name) != after[name]}


def moved_either(page, key: str, other: str) -> set[str]:
    """``key`` pressed, or ``other`` where ``key`` changed nothing (the player was at that end)."""
    changed, names = moved(page, key)
    return names if changed else moved(page, other)[1]


def low_contrast(page) -> list[str]:
    return sorted({f"{text!r} {r}:1" for text, r in page.evaluate(JS_CONTRAST) if r < AA})


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_player_is_named_announced_described_and_readable(context, harness, page_md, name):
    page, errors = open_player(context, harness, page_md, name)
    found = page.evaluate(JS_A11Y)
    problems = []
    if found["role"] != "group" or not found["title"] or found["name"] != found["title"]:
        problems.append(f"the group is named {found['name']!r}, not by its title {found['title']!r}")
    for chart in found["charts"]:
        if chart["role"] != "img" or not chart["name"] or not chart["description"]:
            problems.append(f"drawing {chart['what']} without a role img, a name and a text description: {chart}")
    polite = [text for live, text in found["live"] if live == "polite"]
    if len(polite) != 1:
        problems.append(f"{len(polite)} polite live regions (expected one): {found['live']}")
    problems += [f"contrast under {AA}:1 at the start: {c}" for c in low_contrast(page)]

    arrows = moved_either(page, "ArrowRight", "ArrowLeft")
    said = [text for live, text in page.evaluate(JS_A11Y)["live"] if live == "polite"]
    if not said or not said[0] or said == polite:
        problems.append(f"a step is not announced: the live region says {said} (before: {polite})")
    ends = moved_either(page, "End", "Home")
    if ends != arrows:
        problems.append(f"Home/End move {sorted(ends)}, the arrows {sorted(arrows)}")
    problems += [f"contrast under {AA}:1 at the end: {c}" for c in low_contrast(page)]
    assert errors == [], f"{name}: console errors: {errors}"
    assert problems == [], f"{name}:\n" + "\n".join(problems)
