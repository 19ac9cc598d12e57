// The grammar stepper of trace three: one proposal token at a time, the best allowed raw
// logits (the chosen piece in orange), the JSON so far, and the allowed-set size of every step
// on a log strip (the current step marked).  Data: labkit.reader.players.grammar.

import { h, s, modelData, start, stepper, fmt, painted, frame, describe, widthOf, textWidth, say } from "./_shared.mjs";

// Every word the player shows, in each edition's language (the data's token strings stay as they are).
const WORDS = {
  en: { figure: "the best allowed raw logits of this step, and the allowed-set size of every step",
        axis: "raw logit (allowed tokens only)", stepAllowed: "step {step}: {count} allowed",
        strip: "allowed tokens per step (log)", bestAllowed: "best allowed: {best}; ",
        perStep: "allowed per step: {counts} (this is step {step})", slider: "proposal step",
        stepOf: "step {step} of {n}", allowed: "allowed: {allowed} of {vocabulary} tokens", forced: " (forced)",
        chosen: "chosen: {id} {piece}", json: "JSON so far: {json}" },
  zh: { figure: "这一步最好的几个可选原始 logits，以及每一步可选集合的大小",
        axis: "原始 logit（只含可选 token）", stepAllowed: "第 {step} 步：可选 {count} 个",
        strip: "每步可选 token 数（对数）", bestAllowed: "最好的可选：{best}；",
        perStep: "每步可选数：{counts}（当前第 {step} 步）", slider: "提议步",
        stepOf: "第 {step} 步，共 {n} 步", allowed: "可选：{vocabulary} 个 token 中的 {allowed} 个", forced: "（强制）",
        chosen: "选中：{id} {piece}", json: "目前的 JSON：{json}" },
};

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
  const alt = describe(root, svg, say(WORDS, "figure"));
  const lo = Math.min(0, ...data.steps.flatMap((st) => st.best.map((b) => b[2])));
  const hi = Math.max(...data.steps.flatMap((st) => st.best.map((b) => b[2])));
  const x = (v) => left + (v - lo) / (hi - lo) * (W - left - 60);
  svg.append(s("line", { x1: x(0), x2: x(0), y1: top, y2: top + rows * rowH, stroke: "#888" }),
             s("text", { x: left, y: top + rows * rowH + 14, "font-size": 11, fill: "#555" }, say(WORDS, "axis")));
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
    const bar = s("rect", { class: "lk-count", x: left + i * gw + 1, width: gw - 2, y: stripTop + 48 - height, height }, s("title", {}, say(WORDS, "stepAllowed", { step: i + 1, count: c })));
    svg.append(bar);
    return bar;
  });
  svg.append(s("text", { x: left, y: stripTop - 4, "font-size": 11 }, say(WORDS, "strip")));
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
    alt.textContent = say(WORDS, "bestAllowed", { best: step.best.map((b) => `${b[0]} ${b[1]} ${fmt(b[2], 2)}`).join(", ") })
      + say(WORDS, "perStep", { counts: data.counts.join(", "), step: index + 1 });
  }
  return { svg, show };
}

function render({ model, el }) {
  const root = frame(el, "grammar", CSS, "next back", "lk-gram");
  let index = 0, view = null;
  const steps = stepper((i) => go(i), say(WORDS, "slider"));
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
    steps.text.textContent = say(WORDS, "stepOf", { step: step.step, n: data.steps.length });
    steps.show(index, data.steps.length);
    allowed.textContent = say(WORDS, "allowed", { allowed: step.allowed, vocabulary: data.vocabulary })
      + (step.allowed === 1 ? say(WORDS, "forced") : "");
    chosen.textContent = say(WORDS, "chosen", { id: step.chosen[0], piece: step.chosen[1] });
    json.textContent = say(WORDS, "json", { json: step.json });
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
