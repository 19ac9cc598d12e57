// The bandwidth calculator of lab 10: pick the batch, the bytes per parameter and per KV
// element, the context, the KV heads and the bandwidth; left, the decode step's lower bound
// against batch; right, the aggregate and per-request token-rate ceilings (log axes), the
// dotted line B / (KV bytes per request).  Data: labkit.reader.players.bandwidth_calculator.

import { h, s, modelData, start, kernelRow, pickerRow, choices, fmt, painted, frame, describe, say } from "./_shared.mjs";

// Every word the player shows, in each edition's language (numbers stay as they are).
const WORDS = {
  en: { batch: "batch", bytes_per_param: "bytes / parameter", kv_bytes: "bytes / KV element",
        context: "context (tokens)", kv_heads: "KV heads", tb: "bandwidth (TB/s)",
        against: "{ylabel} against batch (log axes)", xaxis: "batch (requests)",
        altBatch: "batch {b}: {values}", dotted: "; dotted line at {v}",
        n_params: "parameters", n_layers: "layers", head_dim: "head size", another: "another model",
        time: "ms per decode step (lower bound)", rates: "tokens/s (ceiling): total, per request",
        numbers: "weights {weights} B · KV {kv} B per request · read {read} B per step → ≥ {ms} ms, "
          + "≤ {total} tok/s in total, ≤ {per} per request · B / KV bytes = {limit}",
        status: "batch {b}: at least {ms} ms per step, at most {total} tokens/s in total" },
  zh: { batch: "batch", bytes_per_param: "每参数字节数", kv_bytes: "每个 KV 元素字节数",
        context: "上下文（token 数）", kv_heads: "KV 头数", tb: "带宽（TB/s）",
        against: "{ylabel}随 batch 的变化（对数坐标）", xaxis: "batch（请求数）",
        altBatch: "batch {b}：{values}", dotted: "；虚线位于 {v}",
        n_params: "参数量", n_layers: "层数", head_dim: "头维度", another: "另一个模型",
        time: "每个 decode 步的毫秒数（下界）", rates: "token/s（上限）：总计、每个请求",
        numbers: "权重 {weights} B · 每个请求的 KV {kv} B · 每步读取 {read} B → ≥ {ms} ms，"
          + "总计 ≤ {total} token/s，每个请求 ≤ {per} · B / KV 字节数 = {limit}",
        status: "batch {b}：每步至少 {ms} ms，总计至多 {total} token/s" },
};

const CSS = `
.lk-bw input[type=number] { width: 7em; }
`;
const W = 330, H = 200, LEFT = 48, TOP = 14, BOTTOM = 30;
const LABELS = Object.fromEntries(["batch", "bytes_per_param", "kv_bytes", "context", "kv_heads", "tb"].map((n) => [n, say(WORDS, n)]));

function panel(root, role, batches, series, ylabel) {
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": role });
  const alt = describe(root, svg, say(WORDS, "against", { ylabel }));
  const x = (b) => LEFT + Math.log2(b) / Math.log2(batches[batches.length - 1]) * (W - LEFT - 10);
  for (const b of batches) svg.append(s("text", { x: x(b), y: H - BOTTOM + 13, "font-size": 11, "text-anchor": "middle", fill: "#555" }, String(b)));
  svg.append(s("text", { x: LEFT + (W - LEFT) / 2, y: H - 3, "font-size": 11, "text-anchor": "middle" }, say(WORDS, "xaxis")),
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
    alt.textContent = batches.map((b, i) => say(WORDS, "altBatch", { b, values: columns.map((values) => fmt(values[i], 2)).join(", ") })).join("; ")
      + (guideValue ? say(WORDS, "dotted", { v: fmt(guideValue, 0) }) : "");
    [[0, 10 ** hi], [1, 10 ** lo]].forEach(([k, v]) => { ticks[k].setAttribute("y", y(v) + 4); ticks[k].textContent = fmt(v, v < 10 ? 2 : 0); });
  } };
}

function render({ model, el }) {
  const root = frame(el, "bandwidth_calculator", CSS, "batch", "lk-bw");
  const { pickers, row } = pickerRow(LABELS, () => draw());
  const asks = Object.fromEntries(["n_params", "n_layers", "head_dim"].map((n) => [n, say(WORDS, n)]));
  const inputs = Object.fromEntries(Object.keys(asks).map((n) => [n, h("input", { type: "number", min: 1, step: 1, "aria-label": asks[n] })]));
  const live = kernelRow(model, say(WORDS, "another"), Object.fromEntries(Object.entries(asks).map(([n, label]) => [label, inputs[n]])),
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
    views = [panel(root, "time", data.batches, ["#4c72b0"], say(WORDS, "time")),
             panel(root, "rates", data.batches, ["#4c72b0", "#55a868"], say(WORDS, "rates"))];
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
    numbers.textContent = say(WORDS, "numbers", { weights: n(budget.weight_bytes), kv: n(budget.kv_bytes), read: n(step[0]),
      ms: fmt(step[1], 3), total: fmt(step[2], 2), per: fmt(step[3], 2), limit: fmt(budget.limit, 0) });
    painted(root, say(WORDS, "status", { b: pickers.batch.value, ms: fmt(step[1], 3), total: fmt(step[2], 2) }));
  }

  return start(model, root, setup);
}

export default { render };
