// The GRPO group player of lab 07: pick a group's rewards and ε; per answer, the advantage
// with the population std (ddof 0), with the sample std (ddof 1), and r − mean (no std), and
// the rewards themselves.  Every number from labkit.labs.grpo (data: labkit.reader.players.grpo_group).

import { h, s, modelData, start, kernelRow, picker, choices, labelled, fmt, painted, frame } from "./_shared.mjs";

const CSS = `
.lk-grpo .lk-d0 { fill: #4c72b0; } .lk-grpo .lk-d1 { fill: #dd8452; } .lk-grpo .lk-c { fill: #999; }
.lk-grpo .lk-r { fill: #8172b3; }
.lk-grpo input[type=text] { width: 10em; }
`;
const SERIES = [["population", "lk-d0", "ddof 0 (population)"], ["sample", "lk-d1", "ddof 1 (sample)"], ["centred", "lk-c", "r − mean (no std)"]];

function buildFigure(k) {
  const W = 470, H = 220, left = 40, top = 24, bottom = 30, mid = top + (H - top - bottom) / 2;
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "data-role": "advantages" });
  const gw = (W - left - 10) / k, bw = gw / 4;
  svg.append(s("line", { x1: left, x2: W - 6, y1: mid, y2: mid, stroke: "#333" }));
  const scale = [s("text", { x: left - 4, y: top + 4, "font-size": 11, "text-anchor": "end" }),
                 s("text", { x: left - 4, y: H - bottom + 4, "font-size": 11, "text-anchor": "end" })];
  svg.append(...scale, s("text", { x: left, y: 12, "font-size": 11 }, SERIES.map((x) => x[2]).join(" · ")));
  const bars = SERIES.map(([, cls], j) => Array.from({ length: k }, (_, i) => {
    const bar = s("rect", { class: cls, x: left + i * gw + (j + 0.5) * bw, width: bw - 2 }, s("title"));
    svg.append(bar);
    return bar;
  }));
  for (let i = 0; i < k; i++) svg.append(s("text", { x: left + (i + 0.5) * gw, y: H - 8, "font-size": 11, "text-anchor": "middle" }, `answer ${i}`));
  const RW = 160, rewards = s("svg", { width: RW, height: H, viewBox: `0 0 ${RW} ${H}`, role: "img", "data-role": "rewards" });
  rewards.append(s("text", { x: 8, y: 12, "font-size": 11 }, "rewards"));
  const rbars = Array.from({ length: k }, (_, i) => {
    const bar = s("rect", { class: "lk-r", x: 10 + i * (RW - 20) / k + 3, width: (RW - 20) / k - 6 }, s("title"));
    rewards.append(bar);
    return bar;
  });
  function show(st) {
    const hi = Math.max(1, ...SERIES.flatMap(([name]) => st[name].map(Math.abs)));
    const y = (v) => mid - v / hi * (mid - top);
    SERIES.forEach(([name], j) => st[name].forEach((v, i) => {
      bars[j][i].setAttribute("y", Math.min(y(v), mid));
      bars[j][i].setAttribute("height", Math.max(1, Math.abs(y(v) - mid)));
      bars[j][i].firstChild.textContent = `${SERIES[j][2]}, answer ${i}: ${fmt(v, 4)}`;
    }));
    scale[0].textContent = fmt(hi, 1); scale[1].textContent = fmt(-hi, 1);
    const rhi = Math.max(1, ...st.rewards.map(Math.abs));
    st.rewards.forEach((v, i) => {
      const h0 = (H - top - bottom) * Math.abs(v) / rhi;
      rbars[i].setAttribute("y", H - bottom - h0);
      rbars[i].setAttribute("height", Math.max(1, h0));
      rbars[i].firstChild.textContent = `answer ${i}: reward ${fmt(v, 2)}`;
    });
  }
  return { nodes: [svg, rewards], show };
}

function render({ model, el }) {
  const root = frame(el, "grpo_group", CSS, "group", "lk-grpo");
  const group = picker("group", "rewards", () => draw());
  const eps = picker("eps", "ε", () => draw());
  const typed = h("input", { type: "text", "aria-label": "another group's rewards", placeholder: "e.g. 0.2 0.5 0.9" });
  const live = kernelRow(model, "another group", { rewards: typed },
                         () => ({ rewards: typed.value.trim().split(/[\s,]+/).map(Number), eps: Number(eps.value) }));
  const numbers = h("div", { class: "lk-label", "data-role": "numbers" });
  const figure = h("div", { style: "display:flex; gap:8px" });
  root.append(h("div", { class: "lk-controls" }, labelled("rewards", group), labelled("ε", eps)), live,
              numbers, figure);
  let view = null;

  function setup() {
    const data = modelData(model);
    choices(group, data.groups, data.start.group);
    choices(eps, data.epsilons, data.start.eps);
    view = null;
    draw();
  }

  function draw() {
    const st = modelData(model).states[`${group.value}|${eps.value}`];
    if (!st) { painted(root); return; }
    if (!view || view.k !== st.rewards.length) {
      view = { k: st.rewards.length, ...buildFigure(st.rewards.length) };
      figure.replaceChildren(...view.nodes);
    }
    view.show(st);
    const list = (v) => `[${v.map((x) => (x === 0 ? "0" : x.toPrecision(6)).replace("-", "−")).join(", ")}]`;
    numbers.textContent = `std ${fmt(st.stds[0], 4)} (ddof 0), ${fmt(st.stds[1], 4)} (ddof 1) · `
      + `ddof 0: ${list(st.population)} · ddof 1: ${list(st.sample)}`;
    painted(root);
  }

  return start(model, root, setup);
}

export default { render };
