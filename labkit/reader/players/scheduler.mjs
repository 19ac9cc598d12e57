// The scheduler player (issue 45): trace one and two other requests on a paged KV cache, one
// engine step at a time.  A capacity picker (each capacity was run by the real engine when the
// page was built), a stepper; the pool's blocks coloured by the requests holding them (a block
// held by two or more is a shared prefix: its refcount is the number shown), each request's
// block table, the chunks fed against the token budget, and who was preempted or left.
// Data: labkit.reader.players.scheduler.

import { h, s, modelData, start, painted, frame, describe, stepper, picker, choices, labelled, widthOf } from "./_shared.mjs";

const CSS = `
.lk-sched table { border-collapse: collapse; margin-top: 4px; }
.lk-sched td { padding: 1px 10px 1px 0; vertical-align: top; }
.lk-sched .lk-pre { color: #c44e52; font-weight: 700; }
`;
const COLOURS = ["#1f4e8c", "#a0471a", "#2b6e3a", "#5b4a91"];  // white text and white ground both read ≥ 4.5:1
const FREE = "#eeeeee";

function render({ model, el }) {
  const root = frame(el, "scheduler", CSS, "next back", "lk-sched");
  const capacity = picker("capacity", "capacity in blocks", () => { at = 0; draw(); });
  const steps = stepper((i) => { at = i; draw(); }, "engine step");
  const line = h("div", { class: "lk-label", "data-role": "step" });
  const pool = h("div", { "data-role": "pool" });
  const tables = h("table", { "data-role": "tables" });
  root.append(h("div", { class: "lk-controls" }, labelled("capacity", capacity), ...steps.nodes), line, pool, tables);
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
    const alt = describe(root, svg, "the pool's blocks and the requests holding them");
    step.blocks.forEach((owners, b) => {
      const fill = owners.length ? colour(data, owners[0]) : FREE;
      svg.append(s("rect", { x: 1 + b * CELL, y: 1, width: CELL - 3, height: CELL - 3, fill, stroke: "#555" },
                   s("title", {}, owners.length ? `block ${b}: ${owners.join(", ")} (refcount ${owners.length})` : `block ${b}: free`)),
                 s("text", { x: 1 + b * CELL + (CELL - 3) / 2, y: CELL / 2 + 4, "text-anchor": "middle", "font-size": 12,
                             fill: owners.length ? "#fff" : "#555" }, owners.length > 1 ? `×${owners.length}` : owners.length ? "" : "·"),
                 s("text", { x: 1 + b * CELL + (CELL - 3) / 2, y: H - 2, "text-anchor": "middle", "font-size": 11 }, String(b)));
    });
    alt.textContent = step.blocks.map((o, b) => `block ${b}: ${o.length ? o.join(" and ") : "free"}`).join("; ");
    pool.replaceChildren(svg);
  }

  function draw() {
    const data = modelData(model), run = (data.runs || {})[capacity.value];
    if (!run) { painted(root); return; }
    at = Math.max(0, Math.min(at, run.steps.length - 1));
    const step = run.steps[at];
    steps.show(at, run.steps.length);
    steps.text.textContent = `step ${step.step} of ${run.steps.length - 1}`;
    const used = step.blocks.filter((o) => o.length).length;
    const fed = step.chunks.map(([rid, from, n]) => `${rid} ${n === 1 ? "decodes" : "prefills"} ${from}…${from + n - 1}`);
    line.replaceChildren(`${step.tokens} of ${data.token_budget} tokens: ${fed.join("; ")}. Blocks in use ${used} of ${step.blocks.length}. `,
      ...step.admitted.map(([rid, shared]) => `${rid} joins${shared ? ` (${shared} positions shared)` : ""}. `),
      ...step.preempted.map((rid) => h("span", { class: "lk-pre" }, `${rid} preempted. `)),
      ...step.finished.map((rid) => `${rid} leaves. `));
    drawPool(data, step);
    tables.replaceChildren(...data.requests.map((rid) => h("tr", {},
      h("td", { style: `color: ${colour(data, rid)}; font-weight: 600` }, rid),
      h("td", {}, step.tables[rid] ? `[${step.tables[rid].join(", ")}]` : "(no blocks)"),
      h("td", {}, `tokens ${JSON.stringify(run.selected[rid])}`))));
    painted(root, `capacity ${capacity.value}, step ${step.step}: ${used} blocks in use`);
  }

  return start(model, root, setup, () => draw());
}

export default { render };
