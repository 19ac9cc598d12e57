// The DPO margin player of lab 06: sliders for the policy's log-probs of the chosen and the
// rejected answer and for β; left, the loss L against the log-ratio difference Δ with the
// pair's point; right, how hard the pair still pushes, β·σ(−m).  Every number was computed by
// labkit.labs.dpo (data: labkit.reader.players.dpo_margin); a kernel adds values outside the grid.

import { h, s, modelData, start, kernelRow, fmt, painted, frame, describe, say } from "./_shared.mjs";

// Every word the player shows, in each edition's language (symbols and numbers stay as they are).
const WORDS = {
  en: { against: "{label} against Δ from {from} to {to} nats", axis: "Δ (nats)",
        alt: "the pair at Δ {delta}: {label} {value}; the curve: {curve}", chosen: "log π_θ(chosen)",
        rejected: "log π_θ(rejected)", another: "another {label}", anotherPoint: "another point", loss: "DPO loss L (nats)",
        numbers: "reference [{reference}] · Δ {delta} · margin m {margin} · loss {loss} · gradient [{gw}, {gl}]",
        status: "β {beta}, chosen {chosen}, rejected {rejected}: margin {margin}, loss {loss}" },
  zh: { against: "{label}随 Δ 的变化，Δ 从 {from} 到 {to} nats", axis: "Δ（nats）",
        alt: "这一对在 Δ {delta}：{label} {value}；曲线：{curve}", chosen: "log π_θ(选中)",
        rejected: "log π_θ(拒绝)", another: "另一个 {label}", anotherPoint: "另一个点", loss: "DPO 损失 L（nats）",
        numbers: "参考 [{reference}] · Δ {delta} · 间隔 m {margin} · 损失 {loss} · 梯度 [{gw}, {gl}]",
        status: "β {beta}，选中 {chosen}，拒绝 {rejected}：间隔 {margin}，损失 {loss}" },
};

const CSS = `
.lk-dpo input[type=range] { width: 120px; }
.lk-dpo input[type=number] { width: 5em; }
`;
const W = 330, H = 200, LEFT = 44, TOP = 14, BOTTOM = 34;

function panel(root, role, label, deltas) {
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": role });
  const alt = describe(root, svg, say(WORDS, "against", { label, from: deltas[0], to: deltas[deltas.length - 1] }));
  const x = (d) => LEFT + (d - deltas[0]) / (deltas[deltas.length - 1] - deltas[0]) * (W - LEFT - 8);
  for (const d of [-15, -10, -5, 0, 5, 10, 15]) {
    svg.append(s("line", { x1: x(d), x2: x(d), y1: TOP, y2: H - BOTTOM, stroke: d === 0 ? "#aaa" : "#eee" }),
               s("text", { x: x(d), y: H - BOTTOM + 13, "font-size": 11, "text-anchor": "middle", fill: "#555" }, String(d)));
  }
  svg.append(s("text", { x: LEFT + (W - LEFT) / 2, y: H - 4, "font-size": 11, "text-anchor": "middle" }, say(WORDS, "axis")),
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
    alt.textContent = say(WORDS, "alt", { delta: fmt(at, 2), label, value: fmt(value, 4),
      curve: values.filter((v, i) => i % every === 0).map((v, i) => `Δ ${fmt(deltas[i * every], 1)}: ${fmt(v, 3)}`).join(", ") });
  } };
}

function render({ model, el }) {
  const root = frame(el, "dpo_margin", CSS, "beta", "lk-dpo");
  const names = ["chosen", "rejected", "beta"];
  const labels = { chosen: say(WORDS, "chosen"), rejected: say(WORDS, "rejected"), beta: "β" };
  const sliders = {}, shown = {}, asks = {};
  for (const name of names) {
    sliders[name] = h("input", { type: "range", min: 0, step: 1, "data-control": name, "aria-label": labels[name], oninput: () => draw() });
    shown[name] = h("span", { class: "lk-label" });
    asks[name] = h("input", { type: "number", step: name === "beta" ? 0.05 : 0.1, "aria-label": say(WORDS, "another", { label: labels[name] }) });
  }
  const live = kernelRow(model, say(WORDS, "anotherPoint"), Object.fromEntries(names.map((n) => [labels[n], asks[n]])),
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
    views = [panel(root, "loss", say(WORDS, "loss"), data.deltas), panel(root, "pull", "β·σ(−m)", data.deltas)];
    panels.replaceChildren(views[0].svg, views[1].svg);
    draw();
  }

  function draw() {
    const data = modelData(model);
    const value = Object.fromEntries(names.map((n) => [n, data.axes[n][Number(sliders[n].value)]]));
    for (const name of names) shown[name].textContent = value[name];
    const [margin, loss, gw, gl] = data.points[`${value.beta}|${value.chosen}|${value.rejected}`];
    const curve = data.curves[value.beta], delta = margin / Number(value.beta);
    numbers.textContent = say(WORDS, "numbers", { reference: data.reference.join(", "), delta: fmt(delta, 2), margin: fmt(margin, 4),
      loss: fmt(loss, 4), gw: fmt(gw, 4), gl: fmt(gl, 4) });
    views[0].show(curve.loss, delta, loss);
    views[1].show(curve.pull, delta, Math.abs(gw));
    painted(root, say(WORDS, "status", { beta: value.beta, chosen: value.chosen, rejected: value.rejected, margin: fmt(margin, 4), loss: fmt(loss, 4) }));
  }

  return start(model, root, setup);
}

export default { render };
