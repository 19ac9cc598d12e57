// The speculative sampler of lab 09: left, the exact law of the output token, stacked as the
// accepted draft q·α and the refill β·r (or the wrong β·p) with the target p marked; right,
// a seeded Monte Carlo run beside p.  Every number from labkit.labs.speculative
// (data: labkit.reader.players.speculative_sampler); a kernel recomputes for another p and q.

import { h, s, modelData, start, kernelRow, pickerRow, choices, fmt, painted, frame, describe, say } from "./_shared.mjs";

// Every word the player shows, in each edition's language (p, q, α, β, σ, TV and numbers stay as they are).
const WORDS = {
  en: { token: "token {i}", fallback: "rejection refill", draws: "draws", seed: "seed", p: "target p", q: "draft q",
        another: "another p and q", residual: "residual r (correct)", wrong: "p (WRONG)",
        exact: "the exact law of the output token: accepted draft and refill, target p marked",
        observed: "a seeded Monte Carlo run beside the target p", refill: "token {i}: refill {v}",
        seen: "token {i}: observed {v}", exactAlt: "token {i}: accepted {acc} + refill {refill} = {out}, target {p}",
        observedAlt: "token {i}: observed {v}, target {p}",
        numbers: "α = [{alpha}] · β = {beta} · exact output [{output}] · TV to p {tv} · seed {seed}: acceptance {acceptance}, "
          + "observed [{observed}], max {sigmas} σ (check allows {bound})",
        status: "seed {seed}, {draws} draws: observed [{observed}], {verdict} the check", within: "within", fails: "fails" },
  zh: { token: "token {i}", fallback: "拒绝后的补抽", draws: "抽样次数", seed: "种子", p: "目标 p", q: "草稿 q",
        another: "另一组 p 和 q", residual: "残差分布 r（正确）", wrong: "p（错误）",
        exact: "输出 token 的精确分布：被接受的草稿与补抽，标出目标 p",
        observed: "一次固定种子的蒙特卡罗运行，与目标 p 并列", refill: "token {i}：补抽 {v}",
        seen: "token {i}：观测 {v}", exactAlt: "token {i}：接受 {acc} + 补抽 {refill} = {out}，目标 {p}",
        observedAlt: "token {i}：观测 {v}，目标 {p}",
        numbers: "α = [{alpha}] · β = {beta} · 精确输出 [{output}] · 与 p 的 TV {tv} · 种子 {seed}：接受率 {acceptance}，"
          + "观测 [{observed}]，最大 {sigmas} σ（检查允许 {bound}）",
        status: "种子 {seed}，{draws} 次抽样：观测 [{observed}]，{verdict}检查", within: "通过", fails: "未通过" },
};

const CSS = `
.lk-spec .lk-acc { fill: #4c72b0; } .lk-spec .lk-refill { fill: #dd8452; } .lk-spec .lk-wrong { fill: #c44e52; }
.lk-spec .lk-p { fill: #bbb; } .lk-spec .lk-ok { fill: #55a868; } .lk-spec .lk-bad { fill: #c44e52; }
.lk-spec input[type=text] { width: 9em; }
`;
const W = 330, H = 200, LEFT = 36, TOP = 12, BOTTOM = 28;

function panel(root, role, v, bars, marked, name) {
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": role });
  const alt = describe(root, svg, name);
  const gw = (W - LEFT - 8) / v, made = [];
  const top = s("text", { x: LEFT - 4, y: TOP + 4, "font-size": 11, "text-anchor": "end", fill: "#555" });
  svg.append(s("line", { x1: LEFT, x2: W - 6, y1: H - BOTTOM, y2: H - BOTTOM, stroke: "#333" }), top,
             s("text", { x: LEFT - 4, y: H - BOTTOM + 4, "font-size": 11, "text-anchor": "end", fill: "#555" }, "0"));
  for (let i = 0; i < v; i++) {
    svg.append(s("text", { x: LEFT + (i + 0.5) * gw, y: H - 10, "font-size": 11, "text-anchor": "middle" }, say(WORDS, "token", { i })));
    made.push(bars.map(([dx, w]) => { const r = s("rect", { x: LEFT + i * gw + dx * gw, width: w * gw }, s("title")); svg.append(r); return r; }));
  }
  const marks = Array.from({ length: marked ? v : 0 }, (_, i) => s("line", { x1: LEFT + i * gw + 4, x2: LEFT + (i + 1) * gw - 4, stroke: "#000", "stroke-width": 2 }));
  svg.append(...marks);
  return { svg, made, marks, top, alt };
}

function render({ model, el }) {
  const root = frame(el, "speculative_sampler", CSS, "seed", "lk-spec");
  let views = null;
  const { pickers, row } = pickerRow({ fallback: say(WORDS, "fallback"), draws: say(WORDS, "draws"), seed: say(WORDS, "seed") }, () => draw());
  const pText = h("input", { type: "text", "aria-label": say(WORDS, "p") }), qText = h("input", { type: "text", "aria-label": say(WORDS, "q") });
  const parse = (t) => t.value.trim().split(/[\s,]+/).map(Number);
  const live = kernelRow(model, say(WORDS, "another"), { p: pText, q: qText }, () => ({ p: parse(pText), q: parse(qText) }));
  const numbers = h("div", { class: "lk-label", "data-role": "numbers" });
  const panels = h("div", { class: "lk-panels" });
  root.append(row, live, numbers, panels);

  function setup() {
    const data = modelData(model);
    const show = { fallback: (o) => say(WORDS, o === "residual" ? "residual" : "wrong") };
    for (const [name, select] of Object.entries(pickers)) choices(select, data.axes[name], data.start[name], show[name]);
    pText.value = data.p.join(" "); qText.value = data.q.join(" ");
    const v = data.p.length;
    root.querySelector(".lk-alts").replaceChildren();
    views = [panel(root, "exact", v, [[0.15, 0.7], [0.15, 0.7]], true, say(WORDS, "exact")),
             panel(root, "observed", v, [[0.1, 0.38], [0.52, 0.38]], false, say(WORDS, "observed"))];
    panels.replaceChildren(views[0].svg, views[1].svg);
    draw();
  }

  function draw() {
    const data = modelData(model), f = pickers.fallback.value;
    const ex = data.exact[f], mc = data.runs[`${f}|${pickers.draws.value}|${pickers.seed.value}`];
    const hi = Math.max(...data.p, ...ex.output, ...mc.observed) * 1.15;
    const y = (v) => TOP + (1 - v / hi) * (H - TOP - BOTTOM), y0 = y(0);
    data.p.forEach((p, i) => {
      const [acc, refill] = views[0].made[i];
      acc.setAttribute("class", "lk-acc"); acc.setAttribute("y", y(ex.accepted[i])); acc.setAttribute("height", y0 - y(ex.accepted[i]));
      acc.firstChild.textContent = `token ${i}: q·α = ${fmt(ex.accepted[i], 4)}`;
      refill.setAttribute("class", f === "residual" ? "lk-refill" : "lk-wrong");
      refill.setAttribute("y", y(ex.accepted[i] + ex.refill[i])); refill.setAttribute("height", y(ex.accepted[i]) - y(ex.accepted[i] + ex.refill[i]));
      refill.firstChild.textContent = say(WORDS, "refill", { i, v: fmt(ex.refill[i], 4) });
      const [target, seen] = views[1].made[i];
      target.setAttribute("class", "lk-p"); target.setAttribute("y", y(p)); target.setAttribute("height", y0 - y(p));
      target.firstChild.textContent = `token ${i}: p = ${fmt(p, 4)}`;
      seen.setAttribute("class", mc.sigmas < data.sigma_bound ? "lk-ok" : "lk-bad");
      seen.setAttribute("y", y(mc.observed[i])); seen.setAttribute("height", y0 - y(mc.observed[i]));
      seen.firstChild.textContent = say(WORDS, "seen", { i, v: fmt(mc.observed[i], 6) });
      views[0].marks[i].setAttribute("y1", y(p)); views[0].marks[i].setAttribute("y2", y(p));
    });
    for (const view of views) view.top.textContent = fmt(hi, 2);
    views[0].alt.textContent = data.p.map((p, i) => say(WORDS, "exactAlt", { i, acc: fmt(ex.accepted[i], 4), refill: fmt(ex.refill[i], 4),
      out: fmt(ex.output[i], 4), p: fmt(p, 4) })).join("; ");
    views[1].alt.textContent = data.p.map((p, i) => say(WORDS, "observedAlt", { i, v: fmt(mc.observed[i], 6), p: fmt(p, 4) })).join("; ");
    numbers.textContent = say(WORDS, "numbers", { alpha: data.alpha.map((a) => fmt(a, 4)).join(", "), beta: fmt(ex.beta, 4),
      output: ex.output.map((o) => fmt(o, 4)).join(", "), tv: fmt(ex.tv, 4), seed: pickers.seed.value, acceptance: fmt(mc.acceptance, 4),
      observed: mc.observed.map((o) => fmt(o, 6)).join(", "), sigmas: fmt(mc.sigmas, 1), bound: fmt(data.sigma_bound, 1) });
    painted(root, say(WORDS, "status", { seed: pickers.seed.value, draws: pickers.draws.value, observed: mc.observed.map((o) => fmt(o, 4)).join(", "),
      verdict: say(WORDS, mc.sigmas < data.sigma_bound ? "within" : "fails") }));
  }

  return start(model, root, setup);
}

export default { render };
