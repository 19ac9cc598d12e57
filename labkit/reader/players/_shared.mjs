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
 *  (`python -m labkit.devtools.players pages` writes the copy beside the page). */
const EMBEDDED = null;

/** The player's data: the model's "data" (a kernel's traitlet), else the data this copy carries. */
export function modelData(model) {
  return model.get("data") || EMBEDDED || {};
}

/** Call redraw() whenever the kernel sets new data; returns the cleanup function. */
export function watchData(model, redraw) {
  if (typeof model.on !== "function") return () => {};
  const handler = () => redraw();
  model.on("change:data", handler);
  return () => { if (typeof model.off === "function") model.off("change:data", handler); };
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
}

/** Mark a finished draw (tests wait for the counter; hosts ignore it). */
export function painted(root) {
  root.dataset.frame = String(Number(root.dataset.frame || 0) + 1);
}

const BASE_CSS = `
.lk-player { font: 13px/1.35 system-ui, -apple-system, "Segoe UI", "PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif; color: #222;
  border: 1px solid #d6d6d6; border-radius: 6px; padding: 8px 10px; background: #fff; max-width: 100%; overflow-x: auto; }
.lk-player:focus-visible, .lk-player :focus-visible { outline: 2px solid #4c72b0; outline-offset: 1px; }
.lk-player .lk-title { font-weight: 600; margin-bottom: 4px; }
.lk-player .lk-controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 4px 0 6px; }
.lk-player button { font: inherit; padding: 2px 10px; border: 1px solid #999; border-radius: 4px; background: #f4f4f4; cursor: pointer; }
.lk-player button[disabled] { opacity: 0.45; cursor: default; }
.lk-player button.lk-on { background: #dd8452; color: #fff; border-color: #b8683a; }
.lk-player select, .lk-player input { font: inherit; }
.lk-player .lk-label { color: #333; }
.lk-player .lk-mono { font-family: ui-monospace, "DejaVu Sans Mono", "Noto Sans CJK SC", "WenQuanYi Micro Hei", monospace; font-size: 11px; white-space: pre-wrap; margin: 4px 0 0; }
.lk-player svg text { font-family: system-ui, "PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif; }
.lk-player .lk-scroll { overflow-x: auto; max-width: 100%; }
`;

/** The player's frame: a root div with the book's style, inside el.  ``steps`` names the
 *  control a reader steps with and the one that steps back ("next back"; one name: it cycles).
 *  The root is focusable and keeps every key it receives: JupyterLab's notebook shortcuts
 *  (arrows move the cell selection, Enter edits a cell) never see a key meant for the player. */
export function frame(el, name, css = "", steps = "") {
  el.replaceChildren();
  const root = h("div", { class: "lk-player", "data-player": name, "data-steps": steps, tabindex: 0,
                          role: "group", "aria-label": name });
  root.append(h("style", { text: BASE_CSS + css }));
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
  const slider = root.querySelector('input[type="range"][data-control]');
  if (slider && Math.abs(move) === Infinity) {
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
