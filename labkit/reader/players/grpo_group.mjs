// The GRPO group player of lab 07: pick a group's rewards and ε; per answer, the advantage
// with the population std (ddof 0), with the sample std (ddof 1), and r − mean (no std), and
// the rewards themselves.  Every number from labkit.labs.grpo (data: labkit.reader.players.grpo_group).

import { h, s, modelData, start, kernelRow, picker, choices, labelled, fmt, painted, frame, describe, widthOf, textWidth, say } from "./_shared.mjs";

// Every word the player shows, in each edition's language (ddof, std, ε and numbers stay as they are).
const WORDS = {
  en: { population: "ddof 0 (population)", sample: "ddof 1 (sample)", centred: "r − mean (no std)",
        alt: "each answer's advantage: ddof 0, ddof 1 and r − mean", answer: "answer {i}", rewardsAlt: "the group's rewards",
        rewards: "rewards", tip: "{series}, answer {i}: {v}", reward: "answer {i}: reward {v}", value: "answer {i}: {v}",
        another: "another group's rewards", example: "e.g. 0.2 0.5 0.9", anotherGroup: "another group",
        numbers: "std {s0} (ddof 0), {s1} (ddof 1) · ddof 0: {population} · ddof 1: {sample}",
        status: "rewards {group}, ε {eps}: ddof 0 {population}" },
  zh: { population: "ddof 0（总体）", sample: "ddof 1（样本）", centred: "r − 均值（不除 std）",
        alt: "每个回答的优势：ddof 0、ddof 1 与 r − 均值", answer: "回答 {i}", rewardsAlt: "这一组的奖励",
        rewards: "奖励", tip: "{series}，回答 {i}：{v}", reward: "回答 {i}：奖励 {v}", value: "回答 {i}：{v}",
        another: "另一组的奖励", example: "例如 0.2 0.5 0.9", anotherGroup: "另一组",
        numbers: "std {s0}（ddof 0），{s1}（ddof 1）· ddof 0：{population} · ddof 1：{sample}",
        status: "奖励 {group}，ε {eps}：ddof 0 {population}" },
};

const CSS = `
.lk-grpo .lk-d0 { fill: #4c72b0; } .lk-grpo .lk-d1 { fill: #dd8452; } .lk-grpo .lk-c { fill: #999; }
.lk-grpo .lk-r { fill: #8172b3; }
.lk-grpo input[type=text] { width: 10em; }
`;
const TOP_LINE = 13;
const SERIES = [["population", "lk-d0"], ["sample", "lk-d1"], ["centred", "lk-c"]].map(([name, cls]) => [name, cls, say(WORDS, name)]);

// The advantages are as wide as the player allows (470 px at most); the rewards go under them
// when both do not fit, and the legend takes two lines when one does not.
function buildFigure(root, k, width) {
  const W = Math.min(470, width), legend = SERIES.map((x) => x[2]).join(" · "), oneLine = textWidth(legend) + 8 <= W;
  const H = 220, left = 40, top = oneLine ? 24 : 24 + TOP_LINE, bottom = 30, mid = top + (H - top - bottom) / 2;
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": "advantages" });
  const alt = describe(root, svg, say(WORDS, "alt"));
  const gw = (W - left - 10) / k, bw = gw / 4;
  svg.append(s("line", { x1: left, x2: W - 6, y1: mid, y2: mid, stroke: "#333" }));
  const scale = [s("text", { x: left - 4, y: top + 4, "font-size": 11, "text-anchor": "end" }),
                 s("text", { x: left - 4, y: H - bottom + 4, "font-size": 11, "text-anchor": "end" })];
  if (oneLine) svg.append(...scale, s("text", { x: 4, y: 12, "font-size": 11 }, legend));
  else svg.append(...scale, s("text", { x: 4, y: 12, "font-size": 11 }, SERIES.slice(0, 2).map((x) => x[2]).join(" · ")),
                  s("text", { x: W - 4, y: 12 + TOP_LINE, "font-size": 11, "text-anchor": "end" }, SERIES[2][2]));
  const bars = SERIES.map(([, cls], j) => Array.from({ length: k }, (_, i) => {
    const bar = s("rect", { class: cls, x: left + i * gw + (j + 0.5) * bw, width: bw - 2 }, s("title"));
    svg.append(bar);
    return bar;
  }));
  for (let i = 0; i < k; i++) svg.append(s("text", { x: left + (i + 0.5) * gw, y: H - 8, "font-size": 11, "text-anchor": "middle" }, say(WORDS, "answer", { i })));
  const RW = 160, rewards = s("svg", { width: RW, height: H, viewBox: `0 0 ${RW} ${H}`, "data-role": "rewards" });
  const rewardsAlt = describe(root, rewards, say(WORDS, "rewardsAlt"));
  rewards.append(s("text", { x: 8, y: 12, "font-size": 11 }, say(WORDS, "rewards")));
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
      bars[j][i].firstChild.textContent = say(WORDS, "tip", { series: SERIES[j][2], i, v: fmt(v, 4) });
    }));
    scale[0].textContent = fmt(hi, 1); scale[1].textContent = fmt(-hi, 1);
    const rhi = Math.max(1, ...st.rewards.map(Math.abs));
    st.rewards.forEach((v, i) => {
      const h0 = (H - top - bottom) * Math.abs(v) / rhi;
      rbars[i].setAttribute("y", H - bottom - h0);
      rbars[i].setAttribute("height", Math.max(1, h0));
      rbars[i].firstChild.textContent = say(WORDS, "reward", { i, v: fmt(v, 2) });
    });
    alt.textContent = st.population.map((v, i) => say(WORDS, "value", { i, v: SERIES.map(([name, , label]) => `${label} ${fmt(st[name][i], 4)}`).join(", ") })).join("; ");
    rewardsAlt.textContent = st.rewards.map((v, i) => say(WORDS, "value", { i, v: fmt(v, 2) })).join(", ");
  }
  return { nodes: [svg, rewards], show };
}

function render({ model, el }) {
  const root = frame(el, "grpo_group", CSS, "group", "lk-grpo");
  const group = picker("group", say(WORDS, "rewards"), () => draw());
  const eps = picker("eps", "ε", () => draw());
  const typed = h("input", { type: "text", "aria-label": say(WORDS, "another"), placeholder: say(WORDS, "example") });
  const live = kernelRow(model, say(WORDS, "anotherGroup"), { [say(WORDS, "rewards")]: typed },
                         () => ({ rewards: typed.value.trim().split(/[\s,]+/).map(Number), eps: Number(eps.value) }));
  const numbers = h("div", { class: "lk-label", "data-role": "numbers" });
  const figure = h("div", { class: "lk-panels" });
  root.append(h("div", { class: "lk-controls" }, labelled(say(WORDS, "rewards"), group), labelled("ε", eps)), live,
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
    const width = widthOf(root);
    if (!view || view.k !== st.rewards.length || view.width !== width) {
      root.querySelector(".lk-alts").replaceChildren();
      view = { k: st.rewards.length, width, ...buildFigure(root, st.rewards.length, width) };
      figure.replaceChildren(...view.nodes);
    }
    view.show(st);
    const list = (v) => `[${v.map((x) => (x === 0 ? "0" : x.toPrecision(6)).replace("-", "−")).join(", ")}]`;
    numbers.textContent = say(WORDS, "numbers", { s0: fmt(st.stds[0], 4), s1: fmt(st.stds[1], 4), population: list(st.population), sample: list(st.sample) });
    painted(root, say(WORDS, "status", { group: group.value, eps: eps.value, population: list(st.population) }));
  }

  return start(model, root, setup, () => draw());
}

export default { render };
