// The cache-fault player of lab 05: one fault mode at a time, the per-position max |logit
// error| of the cached decode against the full pass on one log axis (the dashed line is the
// tolerance), and the three checks with their verdicts.  Data: labkit.reader.players.fault_modes.

import { h, s, modelData, start, painted, frame, describe, widthOf, textWidth, say, pick } from "./_shared.mjs";

// Every word the player shows, in each edition's language (mode and check names, numbers are data;
// what a check saw comes in both: data.words).
const WORDS = {
  en: { alt: "max |cached − full| logit error per decode position, log axis, against the tolerance",
        axis: "decode position", tip: "position {i}: max |cached − full| logit {e}", tolerance: "tolerance {tol}",
        position: "position {i}: {e}", picker: "fault mode", mode: "mode", caught: "caught by: {names}",
        nothing: "nothing (correct)", pass: "pass", fail: "FAIL" },
  zh: { alt: "每个 decode 位置的最大 |缓存 − 完整| logit 误差，对数坐标，与容差对比",
        axis: "decode 位置", tip: "位置 {i}：最大 |缓存 − 完整| logit {e}", tolerance: "容差 {tol}",
        position: "位置 {i}：{e}", picker: "故障模式", mode: "模式", caught: "被以下检查发现：{names}",
        nothing: "无（正确）", pass: "通过", fail: "失败" },
};

const CSS = `
.lk-cf .lk-bar { fill: #55a868; }
.lk-cf .lk-bar.lk-caught { fill: #c44e52; }
.lk-cf table { border-collapse: collapse; margin-top: 4px; }
.lk-cf td { padding: 1px 10px 1px 0; }
.lk-cf .lk-fail { color: #c44e52; font-weight: 700; }
`;
const LO = -17, HI = 2;  // log10 of the axis: every mode's errors (1e-16 … 1.6) on one scale

// As wide as the player allows, 520 px at most.
function buildFigure(root, n, width) {
  const W = Math.min(520, width), H = 210, left = 56, top = 10, bottom = 36;
  const y = (v) => top + (HI - Math.log10(Math.max(v, 10 ** LO))) / (HI - LO) * (H - top - bottom);
  const bw = (W - left - 10) / n;
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": "errors" });
  const alt = describe(root, svg, say(WORDS, "alt"));
  for (let e = LO + 1; e <= HI; e += 3) {
    svg.append(s("line", { x1: left, x2: W - 6, y1: y(10 ** e), y2: y(10 ** e), stroke: "#eee" }),
               s("text", { x: left - 4, y: y(10 ** e) + 4, "text-anchor": "end", "font-size": 11, fill: "#555" }, `1e${e}`));
  }
  const tolerance = s("line", { x1: left, x2: W - 6, stroke: "#666", "stroke-dasharray": "4 3" });
  const toleranceLabel = s("text", { x: W - 8, "text-anchor": "end", "font-size": 11, fill: "#444" });
  const plate = s("rect", { fill: "#fff", "fill-opacity": 0.9, height: 14, rx: 2 });  // the label reads over the bars
  const bars = [], tips = [];
  for (let i = 0; i < n; i++) {
    tips.push(s("title"));
    bars.push(s("rect", { class: "lk-bar", x: left + i * bw + 3, width: bw - 6 }, tips[i]));
    svg.append(s("text", { x: left + (i + 0.5) * bw, y: H - bottom + 14, "text-anchor": "middle", "font-size": 11 }, String(i)));
  }
  svg.append(...bars, tolerance, plate, toleranceLabel,
             s("text", { x: left + (W - left) / 2, y: H - 4, "text-anchor": "middle", "font-size": 11 }, say(WORDS, "axis")));
  function show(mode, tol) {
    const y0 = y(10 ** LO);
    mode.errors.forEach((e, i) => {
      bars[i].setAttribute("y", y(e));
      bars[i].setAttribute("height", Math.max(1, y0 - y(e)));
      bars[i].setAttribute("class", "lk-bar" + (mode.caught_by.length ? " lk-caught" : ""));
      tips[i].textContent = say(WORDS, "tip", { i, e: e.toExponential(2) });
    });
    tolerance.setAttribute("y1", y(tol));
    tolerance.setAttribute("y2", y(tol));
    toleranceLabel.setAttribute("y", y(tol) - 3);
    toleranceLabel.textContent = say(WORDS, "tolerance", { tol: tol.toExponential(0) });
    const wide = textWidth(toleranceLabel.textContent) + 6;
    plate.setAttribute("x", W - 8 - wide + 3); plate.setAttribute("width", wide); plate.setAttribute("y", y(tol) - 14);
    alt.textContent = `${say(WORDS, "tolerance", { tol: tol.toExponential(0) })}; `
      + mode.errors.map((e, i) => say(WORDS, "position", { i, e: e.toExponential(2) })).join(", ");
  }
  return { svg, show };
}

function render({ model, el }) {
  const root = frame(el, "fault_modes", CSS, "mode", "lk-cf");
  const picker = h("select", { "data-control": "mode", "aria-label": say(WORDS, "picker"), onchange: () => draw() });
  const caught = h("div", { class: "lk-label", "data-role": "caught" });
  const figure = h("div");
  const checks = h("table", { "data-role": "checks" });
  root.append(h("div", { class: "lk-controls" }, h("label", {}, `${say(WORDS, "mode")} `, picker)), caught, figure, checks);
  let view = null;

  function setup() {
    const data = modelData(model), modes = Object.keys(data.modes || {});
    picker.replaceChildren(...modes.map((m) => h("option", { value: m }, m)));
    picker.value = modes.includes(data.start) ? data.start : modes[0];
    view = null;
    draw();
  }

  function draw() {
    const data = modelData(model), mode = (data.modes || {})[picker.value];
    if (!mode) { painted(root); return; }
    const width = widthOf(root);
    if (!view || view.n !== mode.errors.length || view.width !== width) {
      root.querySelector(".lk-alts").replaceChildren();
      view = { n: mode.errors.length, width, ...buildFigure(root, mode.errors.length, width) };
      figure.replaceChildren(view.svg);
    }
    view.show(mode, data.tolerance);
    caught.textContent = say(WORDS, "caught", { names: mode.caught_by.length ? mode.caught_by.join(", ") : say(WORDS, "nothing") });
    checks.replaceChildren(...mode.checks.map(([name, passed, seen]) =>
      h("tr", {}, h("td", {}, name), h("td", { class: passed ? "" : "lk-fail" }, say(WORDS, passed ? "pass" : "fail")), h("td", {}, pick(seen)))));
    painted(root, `${picker.value}: ${caught.textContent}`);
  }

  return start(model, root, setup, () => draw());
}

export default { render };
