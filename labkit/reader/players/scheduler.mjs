// The scheduler player (issue 45): trace one and two other requests on a paged KV cache, one
// engine step at a time.  A capacity picker (each capacity was run by the real engine when the
// page was built), a stepper; the pool's blocks coloured by the requests holding them (a block
// held by two or more is a shared prefix: its refcount is the number shown), each request's
// block table, the chunks fed against the token budget, and who was preempted or left.
// Data: labkit.reader.players.scheduler.

import { h, s, modelData, start, painted, frame, describe, stepper, picker, choices, labelled, widthOf, say } from "./_shared.mjs";

// Every word the player shows, in each edition's language (request IDs, block numbers and tokens are data).
const WORDS = {
  en: { picker: "capacity in blocks", slider: "engine step", capacity: "capacity",
        alt: "the pool's blocks and the requests holding them", held: "block {b}: {owners} (refcount {n})",
        free: "block {b}: free", block: "block {b}: {owners}", freeWord: "free", and: " and ", stepOf: "step {step} of {n}",
        decodes: "{rid} decodes {from}…{to}", prefills: "{rid} prefills {from}…{to}",
        tokens: "{tokens} of {budget} tokens: {fed}. Blocks in use {used} of {n}. ", joins: "{rid} joins. ",
        joinsShared: "{rid} joins ({shared} positions shared). ", preempted: "{rid} preempted. ", leaves: "{rid} leaves. ",
        noBlocks: "(no blocks)", selected: "tokens {tokens}", status: "capacity {capacity}, step {step}: {used} blocks in use" },
  zh: { picker: "容量（块数）", slider: "引擎步", capacity: "容量",
        alt: "池中的块以及持有它们的请求", held: "块 {b}：{owners}（引用计数 {n}）",
        free: "块 {b}：空闲", block: "块 {b}：{owners}", freeWord: "空闲", and: " 和 ", stepOf: "第 {step} 步，共 {n} 步",
        decodes: "{rid} decode {from}…{to}", prefills: "{rid} 预填充 {from}…{to}",
        tokens: "{tokens} / {budget} 个 token：{fed}。在用的块 {used} / {n}。", joins: "{rid} 加入。",
        joinsShared: "{rid} 加入（共享 {shared} 个位置）。", preempted: "{rid} 被抢占。", leaves: "{rid} 离开。",
        noBlocks: "（没有块）", selected: "token {tokens}", status: "容量 {capacity}，第 {step} 步：在用 {used} 个块" },
};

const CSS = `
.lk-sched table { border-collapse: collapse; margin-top: 4px; }
.lk-sched td { padding: 1px 10px 1px 0; vertical-align: top; }
.lk-sched .lk-pre { color: #c44e52; font-weight: 700; }
`;
const COLOURS = ["#1f4e8c", "#a0471a", "#2b6e3a", "#5b4a91"];  // white text and white ground both read ≥ 4.5:1
const FREE = "#eeeeee";

function render({ model, el }) {
  const root = frame(el, "scheduler", CSS, "next back", "lk-sched");
  const capacity = picker("capacity", say(WORDS, "picker"), () => { at = 0; draw(); });
  const steps = stepper((i) => { at = i; draw(); }, say(WORDS, "slider"));
  const line = h("div", { class: "lk-label", "data-role": "step" });
  const pool = h("div", { "data-role": "pool" });
  const tables = h("table", { "data-role": "tables" });
  root.append(h("div", { class: "lk-controls" }, labelled(say(WORDS, "capacity"), capacity), ...steps.nodes), line, pool, tables);
  let at = 0;

  function setup() {
    const data = modelData(model), caps = Object.keys(data.runs || {});
    choices(capacity, caps, String(data.start));
    at = 0;
    draw();
  }

  function colour(data, rid) {
    return COLOURS[Math.max(0, (data.requests || []).indexOf(rid)) % COLOURS.length];
  }

  function drawPool(data, step) {
    const n = step.blocks.length, CELL = Math.max(20, Math.min(30, Math.floor((widthOf(root) - 4) / n)));
    const W = n * CELL + 2, H = CELL + 16;
    const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const alt = describe(root, svg, say(WORDS, "alt"));
    step.blocks.forEach((owners, b) => {
      const fill = owners.length ? colour(data, owners[0]) : FREE;
      svg.append(s("rect", { x: 1 + b * CELL, y: 1, width: CELL - 3, height: CELL - 3, fill, stroke: "#555" },
                   s("title", {}, owners.length ? say(WORDS, "held", { b, owners: owners.join(", "), n: owners.length }) : say(WORDS, "free", { b }))),
                 s("text", { x: 1 + b * CELL + (CELL - 3) / 2, y: CELL / 2 + 4, "text-anchor": "middle", "font-size": 12,
                             fill: owners.length ? "#fff" : "#555" }, owners.length > 1 ? `×${owners.length}` : owners.length ? "" : "·"),
                 s("text", { x: 1 + b * CELL + (CELL - 3) / 2, y: H - 2, "text-anchor": "middle", "font-size": 11 }, String(b)));
    });
    alt.textContent = step.blocks.map((o, b) => say(WORDS, "block", { b, owners: o.length ? o.join(say(WORDS, "and")) : say(WORDS, "freeWord") })).join("; ");
    pool.replaceChildren(svg);
  }

  function draw() {
    const data = modelData(model), run = (data.runs || {})[capacity.value];
    if (!run) { painted(root); return; }
    at = Math.max(0, Math.min(at, run.steps.length - 1));
    const step = run.steps[at];
    steps.show(at, run.steps.length);
    steps.text.textContent = say(WORDS, "stepOf", { step: step.step, n: run.steps.length - 1 });
    const used = step.blocks.filter((o) => o.length).length;
    const fed = step.chunks.map(([rid, from, n]) => say(WORDS, n === 1 ? "decodes" : "prefills", { rid, from, to: from + n - 1 }));
    line.replaceChildren(say(WORDS, "tokens", { tokens: step.tokens, budget: data.token_budget, fed: fed.join("; "), used, n: step.blocks.length }),
      ...step.admitted.map(([rid, shared]) => say(WORDS, shared ? "joinsShared" : "joins", { rid, shared })),
      ...step.preempted.map((rid) => h("span", { class: "lk-pre" }, say(WORDS, "preempted", { rid }))),
      ...step.finished.map((rid) => say(WORDS, "leaves", { rid })));
    drawPool(data, step);
    tables.replaceChildren(...data.requests.map((rid) => h("tr", {},
      h("td", { style: `color: ${colour(data, rid)}; font-weight: 600` }, rid),
      h("td", {}, step.tables[rid] ? `[${step.tables[rid].join(", ")}]` : say(WORDS, "noBlocks")),
      h("td", {}, say(WORDS, "selected", { tokens: JSON.stringify(run.selected[rid]) })))));
    painted(root, say(WORDS, "status", { capacity: capacity.value, step: step.step, used }));
  }

  return start(model, root, setup, () => draw());
}

export default { render };
