// The bandwidth calculator of lab 10: pick the batch, the bytes per parameter and per KV
// element, the context, the KV heads and the bandwidth; left, the decode step's lower bound
// against batch; right, the aggregate and per-request token-rate ceilings (log axes), the
// dotted line B / (KV bytes per request).  Data: labkit.reader.players.bandwidth_calculator.

import { h, s, modelData, start, kernelRow, pickerRow, choices, fmt, painted, frame, describe } from "./_shared.mjs";

const CSS = `
.lk-bw input[type=number] { width: 7em; }
`;
const W = 330, H = 200, LEFT = 48, TOP = 14, BOTTOM = 30;
const LABELS = { batch: "batch", bytes_per_param: "bytes / parameter", kv_bytes: "bytes / KV element",
                 context: "context (tokens)", kv_heads: "KV heads", tb: "bandwidth (TB/s)" };

function panel(root, role, batches, series, ylabel) {
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": role });
  const alt = describe(root, svg, `${ylabel} against batch (log axes)`);
  const x = (b) => LEFT + Math.log2(b) / Math.log2(batches[batches.length - 1]) * (W - LEFT - 10);
  for (const b of batches) svg.append(s("text", { x: x(b), y: H - BOTTOM + 13, "font-size": 11, "text-anchor": "middle", fill: "#555" }, String(b)));
  svg.append(s("text", { x: LEFT + (W - LEFT) / 2, y: H - 3, "font-size": 11, "text-anchor": "middle" }, "batch (requests)"),
             s("text", { x: 4, y: TOP - 3, "font-size": 11 }, ylabel),
             s("line", { x1: LEFT, x2: W - 6, y1: H - BOTTOM, y2: H - BOTTOM, stroke: "#333" }));
  const guide = s("line", { x1: LEFT, x2: W - 6, stroke: "#888", "stroke-dasharray": "2 3" });
  const ticks = [0, 1].map(() => s("text", { x: LEFT - 4, "font-size": 11, "text-anchor": "end", fill: "#555" }));
  const lines = series.map((color) => s("polyline", { fill: "none", stroke: color, "stroke-width": 2 }));
  const dots = series.map(() => s("circle", { r: 4.5, fill: "#c44e52" }));
  svg.append(guide, ...ticks, ...lines, ...dots);
  return { svg, show(columns, at, guideValue) {
    const all = columns.flat().concat(guideValue ? [guideValue] : []).filter((v) => v > 0);
    const lo = Math.log10(Math.min(...all)) - 0.1, hi = Math.log10(Math.max(...all)) + 0.1;
    const y = (v) => TOP + (hi - Math.log10(v)) / (hi - lo) * (H - TOP - BOTTOM);
    columns.forEach((values, k) => {
      lines[k].setAttribute("points", values.map((v, i) => `${x(batches[i]).toFixed(1)},${y(v).toFixed(1)}`).join(" "));
      dots[k].setAttribute("cx", x(batches[at])); dots[k].setAttribute("cy", y(values[at]));
    });
    guide.setAttribute("visibility", guideValue ? "visible" : "hidden");
    if (guideValue) { guide.setAttribute("y1", y(guideValue)); guide.setAttribute("y2", y(guideValue)); }
    alt.textContent = batches.map((b, i) => `batch ${b}: ${columns.map((values) => fmt(values[i], 2)).join(", ")}`).join("; ")
      + (guideValue ? `; dotted line at ${fmt(guideValue, 0)}` : "");
    [[0, 10 ** hi], [1, 10 ** lo]].forEach(([k, v]) => { ticks[k].setAttribute("y", y(v) + 4); ticks[k].textContent = fmt(v, v < 10 ? 2 : 0); });
  } };
}

function render({ model, el }) {
  const root = frame(el, "bandwidth_calculator", CSS, "batch", "lk-bw");
  const { pickers, row } = pickerRow(LABELS, () => draw());
  const asks = { n_params: "parameters", n_layers: "layers", head_dim: "head size" };
  const inputs = Object.fromEntries(Object.keys(asks).map((n) => [n, h("input", { type: "number", min: 1, step: 1, "aria-label": asks[n] })]));
  const live = kernelRow(model, "another model", Object.fromEntries(Object.entries(asks).map(([n, label]) => [label, inputs[n]])),
                         () => Object.fromEntries(Object.entries(inputs).map(([n, i]) => [n, Number(i.value)])));
  const numbers = h("div", { class: "lk-label", "data-role": "numbers" });
  const panels = h("div", { class: "lk-panels" });
  root.append(row, live, numbers, panels);
  let views = null;

  function setup() {
    const data = modelData(model);
    const options = { ...data.axes, batch: data.batches.map(String) };
    for (const [name, select] of Object.entries(pickers)) choices(select, options[name], data.start[name]);
    for (const [name, input] of Object.entries(inputs)) input.value = data.model[name];
    root.querySelector(".lk-alts").replaceChildren();
    views = [panel(root, "time", data.batches, ["#4c72b0"], "ms per decode step (lower bound)"),
             panel(root, "rates", data.batches, ["#4c72b0", "#55a868"], "tokens/s (ceiling): total, per request")];
    panels.replaceChildren(views[0].svg, views[1].svg);
    draw();
  }

  function draw() {
    const data = modelData(model);
    const budget = data.budgets[Object.keys(data.axes).map((n) => pickers[n].value).join("|")];
    const at = data.batches.indexOf(Number(pickers.batch.value)), step = budget.steps[at];
    const column = (k) => budget.steps.map((row) => row[k]);
    views[0].show([column(1)], at, null);
    views[1].show([column(2), column(3)], at, budget.limit);
    const n = (v) => v.toLocaleString("en-US");
    numbers.textContent = `weights ${n(budget.weight_bytes)} B · KV ${n(budget.kv_bytes)} B per request · `
      + `read ${n(step[0])} B per step → ≥ ${fmt(step[1], 3)} ms, ≤ ${fmt(step[2], 2)} tok/s in total, `
      + `≤ ${fmt(step[3], 2)} per request · B / KV bytes = ${fmt(budget.limit, 0)}`;
    painted(root, `batch ${pickers.batch.value}: at least ${fmt(step[1], 3)} ms per step, at most ${fmt(step[2], 2)} tokens/s in total`);
  }

  return start(model, root, setup);
}

export default { render };
