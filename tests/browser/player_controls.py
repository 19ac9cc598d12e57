"""Operating a player's controls from the test, in the page, and timing each change.

Every control of a player carries ``data-control``.  ``OPERATE`` (run in the page) moves one
control the way a reader would — a click, the next option of a select, the other end of a
range, a checkbox toggled — and returns what is drawn before and after and the time:
``work_ms`` from the event to the new picture laid out (handler, DOM update, style and
layout, forced synchronously) and ``frame_ms`` to the next animation frame (when the browser
paints it).
"""

from __future__ import annotations

import statistics


def embed_key(page: str, name: str) -> str:
    """``player@page stem``: how the suite and the benchmark name one embed."""
    return f"{name}@{page.rsplit('/', 1)[-1].removesuffix('.md')}"


def step_controls(page) -> tuple[str, str | None]:
    """(the control a reader steps with, the one that steps back or None: it cycles), as the
    open player names them on its root (``data-steps``)."""
    names = page.evaluate("() => window.playerEl.querySelector('.lk-player').dataset.steps || ''").split()
    if not names:
        raise AssertionError("the player names no step control (data-steps on its root)")
    return names[0], (names[1] if len(names) > 1 else None)


#: the drawing of a player: its markup without the controls' own state
JS_DRAWN = """() => { const root = window.playerEl.querySelector('.lk-player');
  return root ? root.innerHTML : ''; }"""

JS_CONTROLS = """() => Array.from(window.playerEl.querySelectorAll('[data-control]'))
  .map(c => ({name: c.dataset.control, tag: c.tagName.toLowerCase(), type: c.type || '',
              visible: !!(c.offsetWidth || c.offsetHeight), disabled: !!c.disabled}))"""

JS_OPERATE = """async ([name, value, waitMs]) => {
  const root = window.playerEl.querySelector('.lk-player');
  const c = root.querySelector(`[data-control="${name}"]`);
  const before = root.innerHTML;
  const t0 = performance.now();
  if (c.tagName === 'BUTTON') c.click();
  else if (c.tagName === 'SELECT') {
    c.selectedIndex = value !== null ? value : (c.selectedIndex + 1) % c.options.length;
    c.dispatchEvent(new Event('change', {bubbles: true}));
  } else if (c.type === 'checkbox') { c.checked = !c.checked; c.dispatchEvent(new Event('change', {bubbles: true})); }
  else if (c.type === 'range') {
    c.value = value !== null ? String(value) : (c.value === c.max ? c.min : c.max);
    c.dispatchEvent(new Event('input', {bubbles: true}));
  }
  root.getBoundingClientRect(); void root.offsetHeight;
  const t1 = performance.now();
  await new Promise(resolve => requestAnimationFrame(() => resolve()));
  const t2 = performance.now();
  // a control that asks the kernel (a fault, a crash point) changes the drawing only once the
  // kernel has re-run the computation: wait for that when asked to
  for (let waited = 0; waitMs && root.innerHTML === before && waited < waitMs; waited += 100) {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  return {changed: root.innerHTML !== before, work_ms: t1 - t0, frame_ms: t2 - t0};
}"""


def controls(page) -> list[dict]:
    return page.evaluate(JS_CONTROLS)


def operate(page, name: str, value=None, wait_ms: int = 0) -> dict:
    return page.evaluate(JS_OPERATE, [name, value, wait_ms])


def text(page) -> str:
    return page.evaluate("() => window.playerEl.innerText")


def every_control_changes_the_drawing(page, wait_ms: int = 0) -> dict[str, bool]:
    """Operate each visible control once, last one first (pickers of a whole view come first
    in a player and rebuild the controls after them); a disabled one once another control has
    enabled it.  Name → whether the drawing changed."""
    result: dict[str, bool] = {}
    pending = [c["name"] for c in controls(page) if c["visible"]][::-1]
    unblocked = False
    while pending:
        now = {c["name"]: c for c in controls(page)}
        ready = [n for n in pending if n in now and not now[n]["disabled"]]
        if not ready and not unblocked and "back" in now and "back" not in pending:
            operate(page, "back")  # e.g. "next" is disabled at the last step
            unblocked = True
            continue
        if not ready:
            break
        result[ready[0]] = operate(page, ready[0], wait_ms=wait_ms)["changed"]
        pending.remove(ready[0])
    for name in pending:
        result[name] = False
    return result


def step_times(page, name: str, back: str | None = None, repeats: int = 12) -> dict:
    """Median times of ``repeats`` changes of control ``name`` (alternating with ``back``
    when the control is a one-way button)."""
    work, frame = [], []
    for i in range(repeats):
        which = back if (back and i % 2) else name
        timing = operate(page, which)
        work.append(timing["work_ms"])
        frame.append(timing["frame_ms"])
    return {"work_ms": statistics.median(work), "frame_ms": statistics.median(frame), "n": repeats}


#: the element that has the keyboard focus: a control's name, "root" (the player itself) or None
JS_FOCUSED = """() => { const a = window.playerEl.getRootNode().activeElement;
  if (!a || !window.playerEl.contains(a)) return null;
  if (a.classList.contains('lk-player')) return {name: 'root', tag: 'root'};
  return {name: a.dataset.control || a.tagName.toLowerCase(), tag: a.tagName.toLowerCase(), type: a.type || '',
          last: a.tagName === 'SELECT' ? a.selectedIndex === a.options.length - 1 : a.value === a.max}; }"""


def drawn(page) -> str:
    return page.evaluate(JS_DRAWN)


def press(page, key: str) -> bool:
    """Press ``key`` where the focus is; whether the drawing changed."""
    before = drawn(page)
    page.keyboard.press(key)
    page.wait_for_timeout(30)
    return drawn(page) != before


def keyboard_alone(page) -> tuple[dict[str, bool], set[str]]:
    """Drive the player with the keyboard only: Tab onto it and step with the arrows, Tab to each
    control and press what a reader would (Enter on a button, an arrow on a select or a slider),
    twice round, then Home/End on the player.  Returns (key or control → whether the drawing changed, the
    controls a reader could have used: enabled and visible at the start or at the end)."""
    page.keyboard.press("Tab")
    found: dict[str, bool] = {"focus": (page.evaluate(JS_FOCUSED) or {}).get("name") == "root"}
    found["arrows"] = press(page, "ArrowRight") or press(page, "ArrowLeft")
    usable = {c["name"] for c in controls(page) if c["visible"] and not c["disabled"]}
    for _ in range(40):  # twice round the player: a control one key enabled is reached the second time
        page.keyboard.press("Tab")
        focused = page.evaluate(JS_FOCUSED)
        if focused is None or focused["tag"] not in ("button", "select", "input"):
            continue  # outside the player, the player itself, or a box that scrolls with the arrows
        if focused["name"] in found:
            continue  # pressed on the first round
        if focused["tag"] == "button":
            key = "Enter"
        elif focused["tag"] == "select":
            key = "ArrowUp" if focused["last"] else "ArrowDown"
        elif focused["type"] == "range":
            key = "ArrowLeft" if focused["last"] else "ArrowRight"
        else:
            key = "Space"
        found[focused["name"]] = press(page, key)
    page.evaluate("() => window.playerEl.querySelector('.lk-player').focus()")
    found["home/end"] = press(page, "End") | press(page, "Home") or press(page, "End")
    now = controls(page)
    present = {c["name"] for c in now}
    return found, (usable & present) | {c["name"] for c in now if c["visible"] and not c["disabled"]}
