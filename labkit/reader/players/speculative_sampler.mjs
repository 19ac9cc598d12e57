// The speculative sampler of lab 09: left, the exact law of the output token, stacked as the
// accepted draft q·α and the refill β·r (or the wrong β·p) with the target p marked; right,
// a seeded Monte Carlo run beside p.  Every number from labkit.labs.speculative
// (data: labkit.reader.players.speculative_sampler); a kernel recomputes for another p and q.

import { h, s, modelData, start, kernelRow, pickerRow, choices, fmt, painted, frame, describe } from "./_shared.mjs";

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
    svg.append(s("text", { x: LEFT + (i + 0.5) * gw, y: H - 10, "font-size": 11, "text-anchor": "middle" }, `token ${i}`));
    made.push(bars.map(([dx, w]) => { const r = s("rect", { x: LEFT + i * gw + dx * gw, width: w * gw }, s("title")); svg.append(r); return r; }));
  }
  const marks = Array.from({ length: marked ? v : 0 }, (_, i) => s("line", { x1: LEFT + i * gw + 4, x2: LEFT + (i + 1) * gw - 4, stroke: "#000", "stroke-width": 2 }));
  svg.append(...marks);
  return { svg, made, marks, top, alt };
}

function render({ model, el }) {
  const root = frame(el, "speculative_sampler", CSS, "seed", "lk-spec");
  let views = null;
  const { pickers, row } = pickerRow({ fallback: "rejection refill", draws: "draws", seed: "seed" }, () => draw());
  const pText = h("input", { type: "text", "aria-label": "target p" }), qText = h("input", { type: "text", "aria-label": "draft q" });
  const parse = (t) => t.value.trim().split(/[\s,]+/).map(Number);
  const live = kernelRow(model, "another p and q", { p: pText, q: qText }, () => ({ p: parse(pText), q: parse(qText) }));
  const numbers = h("div", { class: "lk-label", "data-role": "numbers" });
  const panels = h("div", { class: "lk-panels" });
  root.append(row, live, numbers, panels);

  function setup() {
    const data = modelData(model);
    const show = { fallback: (o) => (o === "residual" ? "residual r (correct)" : "p (WRONG)") };
    for (const [name, select] of Object.entries(pickers)) choices(select, data.axes[name], data.start[name], show[name]);
    pText.value = data.p.join(" "); qText.value = data.q.join(" ");
    const v = data.p.length;
    root.querySelector(".lk-alts").replaceChildren();
    views = [panel(root, "exact", v, [[0.15, 0.7], [0.15, 0.7]], true, "the exact law of the output token: accepted draft and refill, target p marked"),
             panel(root, "observed", v, [[0.1, 0.38], [0.52, 0.38]], false, "a seeded Monte Carlo run beside the target p")];
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
      refill.firstChild.textContent = `token ${i}: refill ${fmt(ex.refill[i], 4)}`;
      const [target, seen] = views[1].made[i];
      target.setAttribute("class", "lk-p"); target.setAttribute("y", y(p)); target.setAttribute("height", y0 - y(p));
      target.firstChild.textContent = `token ${i}: p = ${fmt(p, 4)}`;
      seen.setAttribute("class", mc.sigmas < data.sigma_bound ? "lk-ok" : "lk-bad");
      seen.setAttribute("y", y(mc.observed[i])); seen.setAttribute("height", y0 - y(mc.observed[i]));
      seen.firstChild.textContent = `token ${i}: observed ${fmt(mc.observed[i], 6)}`;
      views[0].marks[i].setAttribute("y1", y(p)); views[0].marks[i].setAttribute("y2", y(p));
    });
    for (const view of views) view.top.textContent = fmt(hi, 2);
    views[0].alt.textContent = data.p.map((p, i) => `token ${i}: accepted ${fmt(ex.accepted[i], 4)} + refill ${fmt(ex.refill[i], 4)} `
      + `= ${fmt(ex.output[i], 4)}, target ${fmt(p, 4)}`).join("; ");
    views[1].alt.textContent = data.p.map((p, i) => `token ${i}: observed ${fmt(mc.observed[i], 6)}, target ${fmt(p, 4)}`).join("; ");
    numbers.textContent = `α = [${data.alpha.map((a) => fmt(a, 4)).join(", ")}] · β = ${fmt(ex.beta, 4)} · exact output [${ex.output.map((o) => fmt(o, 4)).join(", ")}]`
      + ` · TV to p ${fmt(ex.tv, 4)} · seed ${pickers.seed.value}: acceptance ${fmt(mc.acceptance, 4)}, observed [${mc.observed.map((o) => fmt(o, 6)).join(", ")}],`
      + ` max ${fmt(mc.sigmas, 1)} σ (check allows ${fmt(data.sigma_bound, 1)})`;
    painted(root, `seed ${pickers.seed.value}, ${pickers.draws.value} draws: observed [${mc.observed.map((o) => fmt(o, 4)).join(", ")}], `
      + `${mc.sigmas < data.sigma_bound ? "within" : "fails"} the check`);
  }

  return start(model, root, setup);
}

export default { render };
