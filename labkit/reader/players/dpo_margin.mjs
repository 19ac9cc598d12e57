// The DPO margin player of lab 06: sliders for the policy's log-probs of the chosen and the
// rejected answer and for β; left, the loss L against the log-ratio difference Δ with the
// pair's point; right, how hard the pair still pushes, β·σ(−m).  Every number was computed by
// labkit.labs.dpo (data: labkit.reader.players.dpo_margin); a kernel adds values outside the grid.

import { h, s, modelData, start, kernelRow, fmt, painted, frame, describe } from "./_shared.mjs";

const CSS = `
.lk-dpo input[type=range] { width: 120px; }
.lk-dpo input[type=number] { width: 5em; }
`;
const W = 330, H = 200, LEFT = 44, TOP = 14, BOTTOM = 34;

function panel(root, role, label, deltas) {
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": role });
  const alt = describe(root, svg, `${label} against Δ from ${deltas[0]} to ${deltas[deltas.length - 1]} nats`);
  const x = (d) => LEFT + (d - deltas[0]) / (deltas[deltas.length - 1] - deltas[0]) * (W - LEFT - 8);
  for (const d of [-15, -10, -5, 0, 5, 10, 15]) {
    svg.append(s("line", { x1: x(d), x2: x(d), y1: TOP, y2: H - BOTTOM, stroke: d === 0 ? "#aaa" : "#eee" }),
               s("text", { x: x(d), y: H - BOTTOM + 13, "font-size": 11, "text-anchor": "middle", fill: "#555" }, String(d)));
  }
  svg.append(s("text", { x: LEFT + (W - LEFT) / 2, y: H - 4, "font-size": 11, "text-anchor": "middle" }, "Δ (nats)"),
             s("text", { x: 4, y: TOP - 2, "font-size": 11 }, label));
  const line = s("polyline", { fill: "none", stroke: role === "loss" ? "#4c72b0" : "#55a868", "stroke-width": 2 });
  const dot = s("circle", { r: 5, fill: "#c44e52" });
  const top = s("text", { x: LEFT - 4, y: TOP + 4, "font-size": 11, "text-anchor": "end", fill: "#555" });
  svg.append(s("text", { x: LEFT - 4, y: H - BOTTOM, "font-size": 11, "text-anchor": "end", fill: "#555" }, "0"), top, line, dot);
  return { svg, show(values, at, value) {
    const hi = Math.max(...values) * 1.05 || 1;
    const y = (v) => TOP + (1 - v / hi) * (H - TOP - BOTTOM);
    line.setAttribute("points", values.map((v, i) => `${x(deltas[i]).toFixed(1)},${y(v).toFixed(1)}`).join(" "));
    dot.setAttribute("cx", x(Math.max(deltas[0], Math.min(deltas[deltas.length - 1], at))));
    dot.setAttribute("cy", y(value));
    top.textContent = fmt(hi, 2);
    const every = Math.max(1, Math.round(values.length / 7));
    alt.textContent = `the pair at Δ ${fmt(at, 2)}: ${label} ${fmt(value, 4)}; the curve: `
      + values.filter((v, i) => i % every === 0).map((v, i) => `Δ ${fmt(deltas[i * every], 1)}: ${fmt(v, 3)}`).join(", ");
  } };
}

function render({ model, el }) {
  const root = frame(el, "dpo_margin", CSS, "beta", "lk-dpo");
  const names = ["chosen", "rejected", "beta"];
  const labels = { chosen: "log π_θ(chosen)", rejected: "log π_θ(rejected)", beta: "β" };
  const sliders = {}, shown = {}, asks = {};
  for (const name of names) {
    sliders[name] = h("input", { type: "range", min: 0, step: 1, "data-control": name, "aria-label": labels[name], oninput: () => draw() });
    shown[name] = h("span", { class: "lk-label" });
    asks[name] = h("input", { type: "number", step: name === "beta" ? 0.05 : 0.1, "aria-label": `another ${labels[name]}` });
  }
  const live = kernelRow(model, "another point", Object.fromEntries(names.map((n) => [labels[n], asks[n]])),
                         () => Object.fromEntries(names.filter((n) => asks[n].value !== "").map((n) => [n, Number(asks[n].value)])));
  const numbers = h("div", { class: "lk-label", "data-role": "numbers" });
  const panels = h("div", { class: "lk-panels" });
  root.append(h("div", { class: "lk-controls" }, ...names.map((n) => h("label", {}, `${labels[n]} `, sliders[n], " ", shown[n]))),
              live, numbers, panels);
  let views = null;

  function setup() {
    const data = modelData(model);
    for (const name of names) {
      const axis = data.axes[name];
      sliders[name].max = String(axis.length - 1);
      sliders[name].value = String(Math.max(0, axis.indexOf(data.start[name])));
    }
    root.querySelector(".lk-alts").replaceChildren();
    views = [panel(root, "loss", "DPO loss L (nats)", data.deltas), panel(root, "pull", "β·σ(−m)", data.deltas)];
    panels.replaceChildren(views[0].svg, views[1].svg);
    draw();
  }

  function draw() {
    const data = modelData(model);
    const value = Object.fromEntries(names.map((n) => [n, data.axes[n][Number(sliders[n].value)]]));
    for (const name of names) shown[name].textContent = value[name];
    const [margin, loss, gw, gl] = data.points[`${value.beta}|${value.chosen}|${value.rejected}`];
    const curve = data.curves[value.beta], delta = margin / Number(value.beta);
    numbers.textContent = `reference [${data.reference.join(", ")}] · Δ ${fmt(delta, 2)} · margin m ${fmt(margin, 4)} · `
      + `loss ${fmt(loss, 4)} · gradient [${fmt(gw, 4)}, ${fmt(gl, 4)}]`;
    views[0].show(curve.loss, delta, loss);
    views[1].show(curve.pull, delta, Math.abs(gw));
    painted(root, `β ${value.beta}, chosen ${value.chosen}, rejected ${value.rejected}: margin ${fmt(margin, 4)}, loss ${fmt(loss, 4)}`);
  }

  return start(model, root, setup);
}

export default { render };
