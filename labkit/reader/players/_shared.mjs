// Helpers every player shares, imported by each player module.  MyST's {anywidget}
// directive copies one module file to the site, so the book and the kernel load a player
// as one file: `labkit.reader.players.bundle` inlines this module in place of the import
// (and, for a page of the static book, sets EMBEDDED to the page's data).
const SVG_NS = "http://www.w3.org/2000/svg";

/** An HTML element: h("div", {class: "x"}, child, "text"). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  return fill(node, attrs, children);
}

/** An SVG element: s("rect", {x: 0, y: 0, width: 4, height: 4}). */
export function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  return fill(node, attrs, children);
}

function fill(node, attrs, children) {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
  }
  return node;
}

/** The static book's data: null here; the page's generated copy of this module carries it
 *  (`python -m booktools check` or `build --site` writes the copy beside the page). */
const EMBEDDED = null;

/** The edition's language ("en" or "zh"): null here; the bundle sets it (`bundle(name, lang=…)`:
 *  the kernel's widget and the static page both carry it). */
const LANG = null;

/** The language the players speak: the bundle's, else English. */
export function language() {
  return LANG || "en";
}

/** ``table[language][key]`` (else the English), its {fields} filled: every word a player shows comes
 *  from a table {en: {...}, zh: {...}}; data (token IDs, numbers, event JSON) stays as it is. */
export function say(table, key, fields = {}) {
  const text = (table[language()] || {})[key] ?? table.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (all, name) => (name in fields ? String(fields[name]) : all));
}

/** A text of the data in the edition's language: an exporter writes a visible text either as a
 *  string (the same in every language: data) or as {en, zh} (``data.words``). */
export function pick(text) {
  return text && typeof text === "object" ? text[language()] ?? text.en : text;
}

/** The words of the shared controls. */
const CONTROL_WORDS = {
  en: { give: "give {name} a value", notNumber: "{name}: not a number ({inputs})", compute: "compute",
        kernel: "{what} (the kernel computes it): ", back: "◀ back", next: "next ▶",
        wider: "⇆ wider than the column: scroll it sideways (it follows the step)", refused: "{error}" },
  zh: { give: "请给 {name} 一个值", notNumber: "{name}：不是数（{inputs}）", compute: "计算",
        kernel: "{what}（由内核计算）：", back: "◀ 上一步", next: "下一步 ▶",
        wider: "⇆ 比栏宽：左右滚动查看（它会跟随当前步）", refused: "内核无法计算：{error}" },
};

/** The player's data: the model's "data" (a kernel's traitlet), else the data this copy carries. */
export function modelData(model) {
  return model.get("data") || EMBEDDED || {};
}

/** Show the data's title and run setup() in the player's ``root``, now and again whenever the
 *  kernel sets new data; returns the cleanup function (what a player's render() returns). */
export function start(model, root, setup, relayout = null) {
  const handler = () => {
    const title = pick(modelData(model).title) || "";  // {en, zh}: the exporter names the player in each language
    root.querySelector(".lk-title").textContent = title;
    root.setAttribute("aria-label", title || root.dataset.player);  // the group is named by its title
    setup();
  };
  handler();
  const stopResize = relayout ? onWidth(root, relayout) : () => {};
  if (typeof model.on !== "function") return stopResize;
  model.on("change:data", handler);
  return () => { stopResize(); if (typeof model.off === "function") model.off("change:data", handler); };
}

/** The width a player's drawing has: its root's content box (``fallback`` before it is laid out). */
export function widthOf(root, fallback = 700) {
  const style = getComputedStyle(root);
  const inner = root.clientWidth - parseFloat(style.paddingLeft || 0) - parseFloat(style.paddingRight || 0);
  return inner > 40 ? Math.floor(inner) : fallback;
}

/** Call relayout(width) whenever the player's width changes (a phone, a resized panel): the player
 *  lays its drawings out again for the width it has instead of shrinking them. */
function onWidth(root, relayout) {
  if (typeof ResizeObserver !== "function") return () => {};
  let last = widthOf(root, 0);
  const observer = new ResizeObserver(() => {
    const now = widthOf(root, 0);
    if (now && now !== last) { last = now; relayout(now); }
  });
  observer.observe(root);
  return () => observer.disconnect();
}

/** Ask the kernel for a state the data does not hold (Python: Player.request → recompute). */
export function ask(model, request) {
  model.set("request", request);
  model.save_changes();
}

/** What is wrong with a kernel row's inputs (label → input) and the request made of them: an
 *  empty input, or a number in the request that is not one; null when nothing is. */
export function requestProblem(inputs, request) {
  const empty = Object.entries(inputs).find(([, input]) => !String(input.value ?? "").trim());
  if (empty) return say(CONTROL_WORDS, "give", { name: empty[0] });
  const numbers = (v) => (Array.isArray(v) ? v.flatMap(numbers)
    : v && typeof v === "object" ? Object.values(v).flatMap(numbers) : [v]);
  const bad = Object.entries(request || {}).find(([, v]) => numbers(v).some((x) => typeof x === "number" && !Number.isFinite(x)));
  return bad ? say(CONTROL_WORDS, "notNumber", { name: bad[0], inputs: Object.keys(inputs).join(", ") }) : null;
}

/** The row of a player a kernel backs (hidden without one): ``what`` the kernel would compute,
 *  the inputs (label → input) and a "compute" button that asks it for request().  An input that
 *  cannot make a request, or the kernel's error (the model's "error", when it sets one), is said
 *  in the row, not only in JupyterLab's log. */
export function kernelRow(model, what, inputs, request) {
  const said = h("span", { class: "lk-error", role: "alert", "data-role": "error" });
  const tell = (text) => { said.textContent = text || ""; };
  const run = h("button", { type: "button", onclick: () => {
    let asked = null;
    try { asked = request(); } catch (err) { tell(String(err && err.message || err)); return; }
    const problem = requestProblem(inputs, asked);
    tell(problem);
    if (!problem) ask(model, asked);
  } }, say(CONTROL_WORDS, "compute"));
  const row = h("div", { class: "lk-controls" }, say(CONTROL_WORDS, "kernel", { what }),
                ...Object.entries(inputs).map(([label, input]) => labelled(label, input)), run, said);
  row.style.display = model.get("live") ? "" : "none";
  if (typeof model.on === "function") {
    // what the kernel said stays as it said it (it names the argument); the frame is the edition's
    const refusal = () => (model.get("error") ? say(CONTROL_WORDS, "refused", { error: model.get("error") }) : "");
    model.on("change:error", () => tell(refusal()));
    model.on("change:data", () => tell(refusal()));
  }
  return row;
}

/** A picker: a select named ``name`` (its data-control) that calls onchange. */
export function picker(name, label, onchange) {
  return h("select", { "data-control": name, "aria-label": label, onchange });
}

/** Fill a picker with ``values`` (shown as show(value)) and select ``value`` when it is one of them. */
export function choices(select, values, value, show = (v) => v) {
  select.replaceChildren(...values.map((v) => h("option", { value: v }, show(v))));
  if (values.includes(value)) select.value = value;
}

/** A control with its label in front: labelled("mask", select). */
export function labelled(text, control) {
  return h("label", {}, `${text} `, control);
}

/** One picker per entry of ``labels`` (name → label), each calling onchange, in one row. */
export function pickerRow(labels, onchange) {
  const pickers = Object.fromEntries(Object.entries(labels).map(([name, label]) => [name, picker(name, label, onchange)]));
  const row = h("div", { class: "lk-controls" }, ...Object.keys(labels).map((n) => labelled(labels[n], pickers[n])));
  return { pickers, row };
}

/** A stepper's controls: ◀ back, next ▶, a step slider when ``label`` names one, and the step's
 *  text; go(i) is called with the step asked for (0-based), show(i, n) sets them to step i of n. */
export function stepper(go, label = null) {
  let at = 0;
  const back = h("button", { type: "button", "data-control": "back", onclick: () => go(at - 1) }, say(CONTROL_WORDS, "back"));
  const next = h("button", { type: "button", "data-control": "next", onclick: () => go(at + 1) }, say(CONTROL_WORDS, "next"));
  const slider = label && h("input", { type: "range", min: 1, value: 1, "data-control": "step", "aria-label": label,
                                       oninput: () => go(Number(slider.value) - 1) });
  const text = h("span", { class: "lk-label" });
  function show(i, n) {
    at = i;
    back.disabled = i === 0;
    next.disabled = i === n - 1;
    if (slider) { slider.max = String(n); slider.value = String(i + 1); }
  }
  return { nodes: [back, next, slider, text].filter(Boolean), text, show };
}

/** A fixed number format: fmt(1.23456, 2) → "1.23"; null/undefined → "−∞". */
export function fmt(value, digits = 2) {
  if (value === null || value === undefined) return "−∞";
  return Number(value).toFixed(digits).replace("-", "−");
}

/** Scroll ``box`` (a wide drawing's .lk-scroll) so that x (drawing pixels) sits in its middle:
 *  a long timeline follows the current step instead of leaving it out of view. */
export function follow(box, x) {
  box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
  const cue = box.nextElementSibling;
  if (cue && cue.classList.contains("lk-scroll-cue")) cue.hidden = box.scrollWidth <= box.clientWidth + 1;
}

/** A long timeline's box (a .lk-scroll, the one kind of box that scrolls sideways, reachable with
 *  Tab and scrolled with the arrows) and the cue under it, shown while it is wider than the column. */
export function scroller(role, label, cueText = say(CONTROL_WORDS, "wider")) {
  const box = h("div", { class: "lk-scroll", "data-role": role, tabindex: 0, role: "region", "aria-label": label });
  const cue = h("div", { class: "lk-scroll-cue", hidden: true }, cueText);
  return { box, cue };
}

let described = 0;

/** Make ``node`` (an SVG or a canvas) an image named ``name``, described by a visually hidden text
 *  (returned: the player writes the drawing's values into it at each draw). */
export function describe(root, node, name) {
  const id = `lk-alt-${++described}-${Math.random().toString(36).slice(2, 8)}`;
  const text = h("div", { class: "lk-sr", id, "data-role": "alt" });
  root.querySelector(".lk-alts").append(text);
  node.setAttribute("role", "img");
  node.setAttribute("aria-label", name);
  node.setAttribute("aria-describedby", id);
  return text;
}

/** The text colour that reads best on ``background`` (#rrggbb or rgb(…)): black or white, whichever
 *  contrasts more (at least 4.58:1 on any background). */
export function ink(background) {
  const c = background.startsWith("#") ? [1, 3, 5].map((i) => parseInt(background.slice(i, i + 2), 16))
    : background.match(/\d+/g).slice(0, 3).map(Number);
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  return 1.05 / (lum + 0.05) >= (lum + 0.05) / 0.05 ? "#fff" : "#000";
}

/** Mark a finished draw (tests wait for the counter; hosts ignore it). */
export function painted(root, announce = null) {
  root.dataset.frame = String(Number(root.dataset.frame || 0) + 1);
  if (announce !== null) {
    const status = root.querySelector(".lk-status");
    if (status.textContent !== announce) status.textContent = announce;
  }
}

/** The players' font stack: the system's UI font, then any Chinese font the reader has. */
export const FONT = `system-ui, -apple-system, "Segoe UI", "PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif`;

/** The width in CSS pixels of ``text`` at ``px`` in the players' font (for laying out labels). */
export function textWidth(text, px = 11) {
  textWidth.ctx = textWidth.ctx || document.createElement("canvas").getContext("2d");
  textWidth.ctx.font = `${px}px ${FONT}`;
  return textWidth.ctx.measureText(String(text)).width;
}

const BASE_CSS = `
.lk-player { font: 13px/1.35 ${FONT}; color: #222;
  border: 1px solid #d6d6d6; border-radius: 6px; padding: 8px 10px; background: #fff; max-width: 100%; overflow-x: auto; }
.lk-player:focus-visible, .lk-player :focus-visible { outline: 2px solid #4c72b0; outline-offset: 1px; }
.lk-player .lk-title { font-weight: 600; margin-bottom: 4px; }
.lk-player .lk-controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 4px 0 6px; }
.lk-player button { font: inherit; padding: 2px 10px; border: 1px solid #999; border-radius: 4px; background: #f4f4f4; cursor: pointer; }
.lk-player button[disabled] { opacity: 0.45; cursor: default; }
.lk-player button.lk-on { background: #b5532a; color: #fff; border-color: #8f3f1e; }
.lk-player select, .lk-player input { font: inherit; }
.lk-player .lk-label { color: #333; }
.lk-player .lk-error { color: #a4161a; font-weight: 600; }
.lk-player .lk-mono { font-family: ui-monospace, "DejaVu Sans Mono", "Noto Sans CJK SC", "WenQuanYi Micro Hei", monospace; font-size: 11px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 0; }
.lk-player svg text { font-family: ${FONT}; }
.lk-player .lk-scroll { overflow-x: auto; max-width: 100%; }
.lk-player .lk-scroll-cue { font-size: 12px; color: #555; margin: 2px 0 4px; }
.lk-player .lk-scroll-cue[hidden] { display: none; }
.lk-player .lk-sr { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0; }
.lk-player .lk-panels { display: flex; flex-wrap: wrap; gap: 8px; }
.lk-player .lk-panels > svg { flex: none; }
`;

/** The player's frame: a root div with the book's style and the player's ``kind`` class, and
 *  its title line, inside el.  ``steps`` names the control a reader steps with and the one that
 *  steps back ("next back"; one name: it cycles).
 *  The root is focusable and keeps every key it receives: JupyterLab's notebook shortcuts
 *  (arrows move the cell selection, Enter edits a cell) never see a key meant for the player. */
export function frame(el, name, css = "", steps = "", kind = "") {
  el.replaceChildren();
  const root = h("div", { class: `lk-player ${kind}`.trim(), "data-player": name, "data-steps": steps, tabindex: 0,
                          role: "group", style: "position: relative", lang: language() === "zh" ? "zh-Hans" : "en" });
  // the title (also the group's name, set by start), a polite live region that says each new state
  // in a few words (painted(root, say)), and the drawings' text descriptions (describe)
  root.append(h("style", { text: BASE_CSS + css }), h("div", { class: "lk-title" }),
              h("div", { class: "lk-sr lk-status", "aria-live": "polite", "data-role": "status" }),
              h("div", { class: "lk-sr lk-alts" }));
  root.addEventListener("keydown", (event) => { event.stopPropagation(); stepKey(root, event); });
  el.append(root);
  return root;
}

const MOVES = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, Home: -Infinity, End: Infinity };

/** Arrows step the player, Home/End go to its first/last step, on the root or a button
 *  (a select or a slider with focus takes its own keys; Enter and Space press a button). */
function stepKey(root, event) {
  const move = MOVES[event.key];
  if (!move || (event.target !== root && event.target.tagName !== "BUTTON")) return;
  event.preventDefault();
  const control = (name) => root.querySelector(`[data-control="${name}"]`);
  // Home/End move the control the arrows move: the step slider of a stepper, else the named one
  const named = control((root.dataset.steps || "").split(" ")[0]);
  const slider = named && named.tagName !== "BUTTON" ? null : control("step");
  if (slider && slider.type === "range" && Math.abs(move) === Infinity) {
    slider.value = move < 0 ? slider.min : slider.max;
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    return;
  }
  const button = control(move > 0 ? "next" : "back");
  if (button) {
    for (let i = 0; i < (Math.abs(move) === Infinity ? 1000 : 1) && !button.disabled; i++) button.click();
    return;
  }
  const picker = control((root.dataset.steps || "").split(" ")[0]);
  if (!picker) return;
  const range = picker.type === "range";  // else a select
  const [now, last] = range ? [Number(picker.value), Number(picker.max)] : [picker.selectedIndex, picker.options.length - 1];
  const index = Math.max(0, Math.min(last, move === Infinity ? last : move === -Infinity ? 0 : now + move));
  if (index === now) return;
  if (range) picker.value = String(index);
  else picker.selectedIndex = index;
  picker.dispatchEvent(new Event(range ? "input" : "change", { bubbles: true }));
}
