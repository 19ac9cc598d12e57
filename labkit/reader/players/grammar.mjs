// The grammar stepper of trace three: one proposal token at a time, the best allowed raw
// logits (the chosen piece in orange), the JSON so far, and the allowed-set size of every step
// on a log strip (the current step marked).  Data: labkit.reader.players.grammar.

import { h, s, modelData, start, stepper, fmt, painted, frame, describe, widthOf, textWidth } from "./_shared.mjs";

const CSS = `
.lk-gram .lk-bar { fill: #4c72b0; } .lk-gram .lk-bar.lk-chosen { fill: #dd8452; }
.lk-gram .lk-count { fill: #9aa9c9; } .lk-gram .lk-count.lk-now { fill: #dd8452; }
.lk-gram .lk-json { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; word-break: break-all; }
`;

// As wide as the player allows (680 px at most); the names' column as wide as the longest name.
function buildFigure(root, data, width) {
  const names0 = data.steps.flatMap((st) => st.best.map((b) => `${b[0]} ${b[1]}`));
  const W = Math.min(680, width), H = 244, rows = 10, rowH = 15, top = 8, stripTop = 190;
  const left = Math.min(150, Math.ceil(Math.max(60, ...names0.map((n) => textWidth(n)))) + 10);
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": "allowed" });
  const alt = describe(root, svg, "the best allowed raw logits of this step, and the allowed-set size of every step");
  const lo = Math.min(0, ...data.steps.flatMap((st) => st.best.map((b) => b[2])));
  const hi = Math.max(...data.steps.flatMap((st) => st.best.map((b) => b[2])));
  const x = (v) => left + (v - lo) / (hi - lo) * (W - left - 60);
  svg.append(s("line", { x1: x(0), x2: x(0), y1: top, y2: top + rows * rowH, stroke: "#888" }),
             s("text", { x: left, y: top + rows * rowH + 14, "font-size": 11, fill: "#555" }, "raw logit (allowed tokens only)"));
  const bars = [], names = [], values = [];
  for (let r = 0; r < rows; r++) {
    const y = top + r * rowH;
    names.push(s("text", { x: left - 6, y: y + 11, "font-size": 11, "text-anchor": "end" }));
    bars.push(s("rect", { class: "lk-bar", y: y + 2, height: rowH - 4 }));
    values.push(s("text", { y: y + 11, "font-size": 11, fill: "#555" }));
  }
  svg.append(...names, ...bars, ...values);
  const n = data.counts.length, gw = (W - left - 10) / n, most = Math.log10(Math.max(...data.counts));
  const counts = data.counts.map((c, i) => {
    const height = 8 + 40 * Math.log10(c) / most;
    const bar = s("rect", { class: "lk-count", x: left + i * gw + 1, width: gw - 2, y: stripTop + 48 - height, height }, s("title", {}, `step ${i + 1}: ${c} allowed`));
    svg.append(bar);
    return bar;
  });
  svg.append(s("text", { x: left, y: stripTop - 4, "font-size": 11 }, "allowed tokens per step (log)"));
  function show(step, index) {
    step.best.forEach((b, r) => {
      bars[r].setAttribute("visibility", "visible");
      bars[r].setAttribute("x", Math.min(x(0), x(b[2])));
      bars[r].setAttribute("width", Math.max(1, Math.abs(x(b[2]) - x(0))));
      bars[r].setAttribute("class", "lk-bar" + (b[0] === step.chosen[0] ? " lk-chosen" : ""));
      names[r].textContent = `${b[0]} ${b[1]}`;
      values[r].setAttribute("x", Math.max(x(0), x(b[2])) + 4);
      values[r].textContent = fmt(b[2], 2);
    });
    for (let r = step.best.length; r < rows; r++) {
      bars[r].setAttribute("visibility", "hidden"); names[r].textContent = ""; values[r].textContent = "";
    }
    counts.forEach((bar, i) => bar.setAttribute("class", "lk-count" + (i === index ? " lk-now" : "")));
    alt.textContent = `best allowed: ${step.best.map((b) => `${b[0]} ${b[1]} ${fmt(b[2], 2)}`).join(", ")}; `
      + `allowed per step: ${data.counts.join(", ")} (this is step ${index + 1})`;
  }
  return { svg, show };
}

function render({ model, el }) {
  const root = frame(el, "grammar", CSS, "next back", "lk-gram");
  let index = 0, view = null;
  const steps = stepper((i) => go(i), "proposal step");
  const allowed = h("div", { class: "lk-label", "data-role": "allowed-label" });
  const chosen = h("div", { class: "lk-label", "data-role": "chosen" });
  const json = h("div", { class: "lk-json", "data-role": "json" });
  const figure = h("div");
  root.append(h("div", { class: "lk-controls" }, ...steps.nodes), allowed, chosen, json, figure);

  function setup() {
    const data = modelData(model);
    view = null;
    draw();
  }

  function go(i) {
    index = Math.max(0, Math.min(modelData(model).steps.length - 1, i));
    draw();
  }

  function draw() {
    const data = modelData(model), step = data.steps[index];
    steps.text.textContent = `step ${step.step} of ${data.steps.length}`;
    steps.show(index, data.steps.length);
    allowed.textContent = `allowed: ${step.allowed} of ${data.vocabulary} tokens` + (step.allowed === 1 ? " (forced)" : "");
    chosen.textContent = `chosen: ${step.chosen[0]} ${step.chosen[1]}`;
    json.textContent = `JSON so far: ${step.json}`;
    const width = widthOf(root);
    if (!view || view.data !== data || view.width !== width) {
      root.querySelector(".lk-alts").replaceChildren();
      view = { data, width, ...buildFigure(root, data, width) };
      figure.replaceChildren(view.svg);
    }
    view.show(step, index);
    painted(root, `${steps.text.textContent}: ${chosen.textContent}, ${allowed.textContent}`);
  }

  return start(model, root, setup, () => draw());
}

export default { render };
