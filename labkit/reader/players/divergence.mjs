// The first-divergence explorer: pick a trace and a fault; the golden trace (top row) and
// the faulty run (bottom row) are drawn event by event, the first divergent event in red,
// the events after it faded (consequences, not new causes), with its rule, field, both
// values and the suspect.  Data: labkit.reader.players.divergence.

// ---- shared: begin ----
// Helpers every player shares.  MyST's {anywidget} directive copies one module file to the
// site (no sibling imports), so this block is pasted into each player between the
// "shared:" markers by `python -m labkit.devtools.players sync`; a test checks it is current.
const SVG_NS = "http://www.w3.org/2000/svg";

/** An HTML element: h("div", {class: "x"}, child, "text"). */
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  return fill(node, attrs, children);
}

/** An SVG element: s("rect", {x: 0, y: 0, width: 4, height: 4}). */
function s(tag, attrs = {}, ...children) {
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

/** The player's data: the model's "data" key (a Jupyter traitlet or the directive's JSON body). */
function modelData(model) {
  return model.get("data") || {};
}

/** Call redraw() whenever the kernel sets new data; returns the cleanup function. */
function watchData(model, redraw) {
  if (typeof model.on !== "function") return () => {};
  const handler = () => redraw();
  model.on("change:data", handler);
  return () => { if (typeof model.off === "function") model.off("change:data", handler); };
}

/** A fixed number format: fmt(1.23456, 2) → "1.23"; null/undefined → "−∞". */
function fmt(value, digits = 2) {
  if (value === null || value === undefined) return "−∞";
  return Number(value).toFixed(digits).replace("-", "−");
}

/** Mark a finished draw (tests wait for the counter; hosts ignore it). */
function painted(root) {
  root.dataset.frame = String(Number(root.dataset.frame || 0) + 1);
}

const BASE_CSS = `
.lk-player { font: 13px/1.35 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
  border: 1px solid #d6d6d6; border-radius: 6px; padding: 8px 10px; background: #fff; max-width: 100%; overflow-x: auto; }
.lk-player .lk-title { font-weight: 600; margin-bottom: 4px; }
.lk-player .lk-controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 4px 0 6px; }
.lk-player button { font: inherit; padding: 2px 10px; border: 1px solid #999; border-radius: 4px; background: #f4f4f4; cursor: pointer; }
.lk-player button[disabled] { opacity: 0.45; cursor: default; }
.lk-player button.lk-on { background: #dd8452; color: #fff; border-color: #b8683a; }
.lk-player select, .lk-player input { font: inherit; }
.lk-player .lk-label { color: #333; }
.lk-player .lk-mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; white-space: pre-wrap; margin: 4px 0 0; }
.lk-player svg text { font-family: system-ui, sans-serif; }
`;

/** The player's frame: a root div with the book's style, inside el. */
function frame(el, name, css = "") {
  el.replaceChildren();
  const root = h("div", { class: "lk-player", "data-player": name });
  root.append(h("style", { text: BASE_CSS + css }));
  el.append(root);
  return root;
}
// ---- shared: end ----

const CSS = `
.lk-div .lk-before { fill: #4c72b0; }
.lk-div .lk-first { fill: #c44e52; }
.lk-div .lk-after { fill: #999; opacity: 0.45; }
.lk-div .lk-faded { opacity: 0.45; }
.lk-div table { border-collapse: collapse; margin-top: 4px; }
.lk-div td { padding: 1px 8px 1px 0; vertical-align: top; }
.lk-div td:first-child { color: #666; }
`;

function drawTimelines(golden, faulty, found, faultName) {
  const n = Math.max(golden.length, faulty.length), step = 30, left = 92;
  const W = left + n * step + 150, H = 150, rows = [[44, "golden", golden], [112, `faulty: ${faultName}`, faulty]];
  const split = found ? found.index : n;
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "data-role": "timelines" });
  if (found) {
    const x = left + found.index * step;
    svg.append(s("line", { x1: x, x2: x, y1: 10, y2: H - 8, stroke: "#c44e52", "stroke-dasharray": "3 3" }));
  }
  for (const [y, label, events] of rows) {
    svg.append(s("text", { x: left - 14, y: y + 4, "text-anchor": "end", "font-size": 11, "font-weight": 600 }, label),
               s("line", { x1: left, x2: left + (events.length - 1) * step, y1: y, y2: y, stroke: "#ccc" }));
    events.forEach(([id, type], i) => {
      const cls = i < split ? "lk-before" : i === split ? "lk-first" : "lk-after";
      const x = left + i * step;
      svg.append(s("circle", { class: cls, cx: x, cy: y, r: i === split ? 7 : 5 }, s("title", {}, `${id} ${type}`)),
                 s("text", { x, y: y === 44 ? y - 10 : y + 19, "text-anchor": "middle", "font-size": 8,
                             class: i > split ? "lk-faded" : "" }, id));
    });
    if (found && found.index < events.length) {
      const type = y === 44 ? found.types[0] : found.types[1];
      svg.append(s("text", { x: left + found.index * step + 9, y: y + (y === 44 ? -20 : 32), "font-size": 10, fill: "#c44e52" },
                   type || "(no event)"));
    }
  }
  return svg;
}

function render({ model, el }) {
  const root = frame(el, "divergence", CSS);
  root.classList.add("lk-div");
  const title = h("div", { class: "lk-title" });
  const kindPicker = h("select", { "data-control": "kind", "aria-label": "trace", onchange: () => pickKind(kindPicker.value) });
  const faultPicker = h("select", { "data-control": "fault", "aria-label": "fault", onchange: () => draw() });
  const description = h("div", { class: "lk-label", "data-role": "description" });
  const figure = h("div");
  const verdict = h("div", { "data-role": "verdict" });
  root.append(title, h("div", { class: "lk-controls" }, h("label", {}, "trace ", kindPicker), h("label", {}, "fault ", faultPicker)),
              description, figure, verdict);

  function pickKind(kind, fault) {
    const kinds = modelData(model).kinds || {};
    const names = Object.keys((kinds[kind] || {}).faults || {});
    faultPicker.replaceChildren(...names.map((f) => h("option", { value: f }, f)));
    faultPicker.value = fault && names.includes(fault) ? fault : names[0];
    draw();
  }

  function setup() {
    const data = modelData(model);
    title.textContent = data.title || "First divergence";
    const kinds = Object.keys(data.kinds || {});
    kindPicker.replaceChildren(...kinds.map((k) => h("option", { value: k }, k)));
    const [kind, fault] = data.start || [kinds[0]];
    kindPicker.value = kind;
    pickKind(kind, fault);
  }

  function draw() {
    const kind = (modelData(model).kinds || {})[kindPicker.value];
    const entry = kind && kind.faults[faultPicker.value];
    if (!entry) { figure.replaceChildren(); painted(root); return; }
    const found = entry.divergence;
    description.textContent = `${faultPicker.value}: ${entry.description}`;
    figure.replaceChildren(drawTimelines(kind.golden, entry.events, found, faultPicker.value));
    if (!found) {
      verdict.replaceChildren(h("b", {}, "identical traces: no divergence"));
    } else {
      const row = (k, v) => h("tr", {}, h("td", {}, k), h("td", { class: "lk-mono" }, v));
      verdict.replaceChildren(
        h("div", {}, h("b", {}, `first divergence at event #${found.index} (${found.event_ids[0] || "—"} vs ${found.event_ids[1] || "—"}, ${found.types[0] || found.types[1]})`)),
        h("table", {}, row("rule", found.rule), row("field", found.field), row("golden", found.golden),
          row(`faulty (${faultPicker.value})`, found.faulty), row("suspect", found.suspect)));
    }
    painted(root);
  }

  const stop = watchData(model, setup);
  setup();
  return stop;
}

export default { render };
