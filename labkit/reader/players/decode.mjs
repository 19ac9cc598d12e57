// The decode stepper: trace one, token by token.  Raw logits of every vocabulary entry,
// the masked ones hatched at −∞, the selected token, the cache length per layer at the step
// start and after the decode, and the events the step emitted.  Data: labkit.reader.players.decode.

import { h, s, modelData, start, ask, picker, choices, stepper, fmt, painted, frame, describe, widthOf, say } from "./_shared.mjs";

// Every word the player shows, in each edition's language (token pieces, IDs, finish reasons,
// fault names and events are data: they stay as they are).
const WORDS = {
  en: { logitsAlt: "raw logit of every vocabulary entry at this step", axis: "raw logit",
        cacheAlt: "cache length per layer, at the step start and after the decode", layer: "layer {l}",
        tip: "{id} {piece}: raw {raw}, processed {processed}", start: "blue: step start", after: "green: after decode",
        noDecode: "no decode (finish: {finish})", none: "none",
        selectedAlt: "selected {id} {piece}; masked to −∞: {masked}; raw logits: {raw}",
        cacheStart: "cache per layer when the step starts: {cache}; ", afterDecode: "after decode: {cache}",
        slider: "selection step", fault: "fault", noFault: "no fault", noSteps: "no steps",
        stepOf: "selection step {step} of {n}", perLayer: "layer {l}: {n}",
        cacheLabel: "cache length at step start: {n} ({perLayer})", arrowAfter: " → after decode: {cache}",
        arrowNone: " → no decode (finish: {finish})", selected: "selected: {id} {piece}; masked: [{masked}]",
        streamed: "streamed so far: {text}", nothing: "(nothing)", status: "{step}: selected {id} {piece}" },
  zh: { logitsAlt: "这一步词表中每个条目的原始 logit", axis: "原始 logit",
        cacheAlt: "每层的缓存长度：步首时与 decode 之后", layer: "第 {l} 层",
        tip: "{id} {piece}：原始 {raw}，处理后 {processed}", start: "蓝：步首", after: "绿：decode 之后",
        noDecode: "没有 decode（结束：{finish}）", none: "无",
        selectedAlt: "选中 {id} {piece}；mask 为 −∞ 的：{masked}；原始 logits：{raw}",
        cacheStart: "步首时每层的缓存：{cache}；", afterDecode: "decode 之后：{cache}",
        slider: "选择步", fault: "失败注入", noFault: "不注入失败", noSteps: "没有步",
        stepOf: "第 {step} 个选择步，共 {n} 个", perLayer: "第 {l} 层：{n}",
        cacheLabel: "步首时的缓存长度：{n}（{perLayer}）", arrowAfter: " → decode 之后：{cache}",
        arrowNone: " → 没有 decode（结束：{finish}）", selected: "选中：{id} {piece}；mask 掉的：[{masked}]",
        streamed: "目前已流出的文本：{text}", nothing: "（无）", status: "{step}：选中 {id} {piece}" },
};

const CSS = `
.lk-decode .lk-bar { fill: #4c72b0; }
.lk-decode .lk-bar.lk-masked { fill: url(#lk-hatch); stroke: #999; }
.lk-decode .lk-bar.lk-selected { fill: #dd8452; }
.lk-decode .lk-after { fill: #55a868; }
.lk-decode .lk-after.lk-none { fill: #c8c8c8; }
.lk-decode .lk-figure { display: flex; flex-wrap: wrap; gap: 8px; }
.lk-decode .lk-figure > svg { flex: none; }
`;

// The figure is built once per data (bars, labels, cache columns) and each step only moves
// bars and rewrites labels: a step costs attribute updates, not a new SVG.  The logits are as wide
// as the player allows (500 px at most; the cache columns go under them when both do not fit).
function buildFigure(data, root, width) {
  const pieces = data.pieces, V = pieces.length, steps = data.steps;
  const W = Math.min(500, width), H = 250, left = 40, bottom = 80, top = 14;
  let hi = -Infinity, lo = -3;
  for (const st of steps) for (const v of st.raw) { hi = Math.max(hi, v); lo = Math.min(lo, v - 0.3); }
  hi += 0.8;
  const y = (v) => top + (hi - v) / (hi - lo) * (H - top - bottom);
  const bw = (W - left - 8) / V;
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": "logits" });
  const logitsAlt = describe(root, svg, say(WORDS, "logitsAlt"));
  svg.append(s("defs", {}, s("pattern", { id: "lk-hatch", width: 5, height: 5, patternUnits: "userSpaceOnUse",
                                          patternTransform: "rotate(45)" },
    s("rect", { width: 5, height: 5, fill: "#e4e4e4" }), s("line", { x1: 0, y1: 0, x2: 0, y2: 5, stroke: "#999", "stroke-width": 1.5 }))));
  for (let v = Math.ceil(lo); v <= Math.floor(hi); v += 1) {
    if (v % 2) continue;
    svg.append(s("line", { x1: left, x2: W - 6, y1: y(v), y2: y(v), stroke: v === 0 ? "#888" : "#eee" }),
               s("text", { x: left - 4, y: y(v) + 3, "text-anchor": "end", "font-size": 11, fill: "#555" }, fmt(v, 0)));
  }
  const mid = top + (H - top - bottom) / 2;
  svg.append(s("text", { x: 10, y: mid, "font-size": 11, transform: `rotate(-90 10 ${mid})`, "text-anchor": "middle" }, say(WORDS, "axis")));
  const bars = [], marks = [], ticks = [], names = [], tips = [];
  for (let i = 0; i < V; i++) {
    const x = left + i * bw + 1;
    tips.push(s("title"));
    bars.push(s("rect", { class: "lk-bar", "data-id": i, x, width: bw - 2 }, tips[i]));
    marks.push(s("text", { x: x + bw / 2 - 1, "text-anchor": "middle", "font-size": 11, fill: "#595959" }));
    ticks.push(s("line", { x1: x, x2: x + bw - 2, stroke: "#000", "stroke-width": 2 }));
    names.push(s("text", { x: x + bw / 2, y: H - bottom + 10, "font-size": 11, "text-anchor": "end",
                           transform: `rotate(-60 ${x + bw / 2} ${H - bottom + 10})` }, `${i} ${pieces[i]}`));
  }
  svg.append(...bars, ...marks, ...ticks, ...names);

  const layers = steps[0].cache_start.length, CW = 170, most = Math.max(19, ...steps.flatMap((st) => st.cache_after || st.cache_start)) + 3;
  const cy = (v) => top + (1 - v / most) * (H - top - 40);
  const CH = H + 20;  // the legend's second line below the layer labels
  const cache = s("svg", { width: CW, height: CH, viewBox: `0 0 ${CW} ${CH}`, "data-role": "cache" });
  const cacheAlt = describe(root, cache, say(WORDS, "cacheAlt"));
  const gw = (CW - 20) / layers, columns = [];
  for (let l = 0; l < layers; l++) {
    const x0 = 14 + l * gw, pair = [];
    for (const k of [0, 1]) {
      const x = x0 + 6 + k * (gw / 2 - 4);
      const rect = s("rect", { class: k ? "lk-after" : "lk-bar", x, width: gw / 2 - 10 });
      const label = s("text", { x: x + (gw / 2 - 10) / 2, "font-size": 11, "text-anchor": "middle" });
      cache.append(rect, label);
      pair.push([rect, label]);
    }
    columns.push(pair);
    cache.append(s("text", { x: x0 + gw / 2, y: H - 40 + 14, "font-size": 11, "text-anchor": "middle" }, say(WORDS, "layer", { l })));
  }
  // the legend in two lines: one would run past the 170-px drawing at 11 px
  const legend = [CH - 22, CH - 8].map((y) => s("text", { x: CW / 2, y, "font-size": 11, "text-anchor": "middle", fill: "#555" }));
  cache.append(...legend);

  function show(step) {
    const masked = new Set(step.masked), y0 = y(0);
    step.raw.forEach((value, i) => {
      const y1 = y(value), isMasked = masked.has(i), processed = step.processed[i];
      const bar = bars[i];
      bar.setAttribute("class", "lk-bar" + (isMasked ? " lk-masked" : "") + (i === step.selected ? " lk-selected" : ""));
      bar.setAttribute("y", Math.min(y0, y1));
      bar.setAttribute("height", Math.max(1, Math.abs(y1 - y0)));
      tips[i].textContent = say(WORDS, "tip", { id: i, piece: pieces[i], raw: fmt(value, 4), processed: fmt(processed, 4) });
      marks[i].textContent = isMasked ? "−∞" : "";
      marks[i].setAttribute("y", Math.min(y0, y1) - 3);
      const tick = !isMasked && processed !== null && processed !== value;
      ticks[i].setAttribute("visibility", tick ? "visible" : "hidden");
      if (tick) { ticks[i].setAttribute("y1", y(processed)); ticks[i].setAttribute("y2", y(processed)); }
      names[i].setAttribute("font-weight", i === step.selected ? 700 : 400);
    });
    const after = step.cache_after || step.cache_start;
    columns.forEach((pair, l) => {
      for (const [k, value] of [[0, step.cache_start[l]], [1, after[l]]]) {
        const [rect, label] = pair[k];
        rect.setAttribute("y", cy(value));
        rect.setAttribute("height", cy(0) - cy(value));
        if (k) rect.setAttribute("class", "lk-after" + (step.cache_after ? "" : " lk-none"));
        label.setAttribute("y", cy(value) - 3);
        label.textContent = value;
      }
    });
    const lines = step.cache_after ? [say(WORDS, "start"), say(WORDS, "after")] : [say(WORDS, "noDecode", { finish: step.finish }), ""];
    lines.forEach((line, k) => { legend[k].textContent = line; });
    logitsAlt.textContent = say(WORDS, "selectedAlt", { id: step.selected, piece: pieces[step.selected],
      masked: step.masked.join(", ") || say(WORDS, "none"), raw: step.raw.map((v, i) => `${i} ${pieces[i]} ${fmt(v, 2)}`).join(", ") });
    cacheAlt.textContent = say(WORDS, "cacheStart", { cache: step.cache_start.join(", ") })
      + (step.cache_after ? say(WORDS, "afterDecode", { cache: step.cache_after.join(", ") }) : say(WORDS, "noDecode", { finish: step.finish }));
  }
  return { nodes: [svg, cache], show };
}

function render({ model, el }) {
  const root = frame(el, "decode", CSS, "next back", "lk-decode");
  let index = 0, view = null;
  const controls = stepper((i) => go(i), say(WORDS, "slider"));
  const faultPicker = picker("fault", say(WORDS, "fault"), () => ask(model, { fault: faultPicker.value || null }));
  const cacheLabel = h("div", { class: "lk-label", "data-role": "cache" });
  const selectedLabel = h("div", { class: "lk-label", "data-role": "selected" });
  const textLabel = h("div", { class: "lk-label", "data-role": "text" });
  const figure = h("div", { class: "lk-figure" });
  const events = h("pre", { class: "lk-mono", "data-role": "events" });
  root.append(h("div", { class: "lk-controls" }, ...controls.nodes, faultPicker),
              cacheLabel, selectedLabel, textLabel, figure, events);

  function setup() {
    const data = modelData(model);
    const live = Boolean(model.get("live")) && Array.isArray(data.faults);
    faultPicker.style.display = live ? "" : "none";
    if (live) choices(faultPicker, ["", ...data.faults], data.fault || "", (f) => f || say(WORDS, "noFault"));
    index = Math.min(index, Math.max(0, (data.steps || []).length - 1));
    draw();
  }

  function go(i) {
    const n = (modelData(model).steps || []).length;
    const clamped = Math.max(0, Math.min(n - 1, i));
    if (clamped === index && root.dataset.frame) return;
    index = clamped;
    draw();
  }

  function draw() {
    const data = modelData(model);
    const steps = data.steps || [];
    if (!steps.length) { figure.replaceChildren(h("div", {}, say(WORDS, "noSteps"))); painted(root); return; }
    const step = steps[index], pieces = data.pieces;
    controls.text.textContent = say(WORDS, "stepOf", { step: step.step, n: steps.length });
    controls.show(index, steps.length);
    const perLayer = step.cache_start.map((n, l) => say(WORDS, "perLayer", { l, n })).join(", ");
    cacheLabel.textContent = say(WORDS, "cacheLabel", { n: step.cache_start[0], perLayer })
      + (step.cache_after ? say(WORDS, "arrowAfter", { cache: step.cache_after.join(", ") }) : say(WORDS, "arrowNone", { finish: step.finish }));
    selectedLabel.textContent = say(WORDS, "selected", { id: step.selected, piece: pieces[step.selected], masked: step.masked.join(", ") });
    textLabel.textContent = say(WORDS, "streamed", { text: step.text || say(WORDS, "nothing") });
    const width = widthOf(root);
    if (!view || view.data !== data || view.width !== width) {
      if (view) root.querySelector(".lk-alts").replaceChildren();
      view = { data, width, ...buildFigure(data, root, width) };
      figure.replaceChildren(...view.nodes);
    }
    view.show(step);
    events.textContent = step.events.map((e) => `${e[0]} ${e[1]}  ${e[2]}`).join("\n");
    painted(root, say(WORDS, "status", { step: controls.text.textContent, id: step.selected, piece: pieces[step.selected] }));
  }

  return start(model, root, setup, () => draw());
}

export default { render };
