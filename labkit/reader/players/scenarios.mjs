// The tool-call scenario player: pick a scenario; its golden trace is a row of event boxes
// coloured by state (blue before the commit, green once the side effect exists, pink for a
// failure state, red for a crash), the commit boundary drawn as a line, each attempt marked.
// Step through the events: the current one is outlined and the journal rows written up to
// it are listed.  Data: labkit.reader.players.scenarios.

import { h, s, modelData, start, ask, picker, choices, labelled, stepper, follow, painted, frame, describe, scroller, ink } from "./_shared.mjs";

const FAILED = new Set(["PARSE_REJECTED", "VALIDATION_REJECTED", "AUTHORIZATION_DENIED", "CONFIRMATION_REJECTED",
                        "CANCELLED", "NOT_COMMITTED", "OUTCOME_UNKNOWN", "FAILED"]);
const CSS = `
.lk-scn rect.lk-box { stroke: #777; stroke-width: 0.6; }
.lk-scn rect.lk-box.lk-current { stroke: #dd8452; stroke-width: 3; }
.lk-scn .lk-journal td { padding: 0 10px 0 0; font-family: ui-monospace, monospace; font-size: 11px; }
.lk-scn .lk-journal tr.lk-future { color: #6e6e6e; font-style: italic; }
`;
const BOX = 104, GAP = 6, LEFT = 8;

function colour(row, index, commit) {
  const [, type, state] = row;
  if (type.startsWith("runtime.crashed")) return "#c44e52";
  if (FAILED.has(state)) return "#f4b6b6";
  if (commit !== null && index >= commit && !type.startsWith("model.") && type !== "text.delta"
      && type !== "response.completed") return "#b9dfb9";
  if (state === "COMMITTED" || state === "OBSERVED") return "#b9dfb9";
  return "#dbe4f3";
}

function buildTimeline(root, entry) {
  const events = entry.events, W = LEFT + events.length * (BOX + GAP) + 10, H = 112, y = 30;
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": "timeline" });
  const alt = describe(root, svg, "the scenario's events, coloured by state, with the commit boundary");
  alt.textContent = events.map(([id, type, state], i) => `${id} ${type} ${state}` + (i === entry.commit ? " (commit boundary)" : "")).join("; ");
  const boxes = events.map((row, i) => {
    const x = LEFT + i * (BOX + GAP);
    const [id, type, state] = row;
    const [head, tail] = type.includes(".") ? [type.slice(0, type.indexOf(".") + 1), type.slice(type.indexOf(".") + 1)] : [type, ""];
    const fill = colour(row, i, entry.commit), text = ink(fill);
    const box = s("rect", { class: "lk-box", x, y, width: BOX, height: 58, rx: 5, fill },
                  s("title", {}, `${id} ${type} ${state}`));
    svg.append(box,
      s("text", { x: x + BOX / 2, y: y + 12, "text-anchor": "middle", "font-size": 11, "font-weight": 600, fill: text }, id),
      s("text", { x: x + BOX / 2, y: y + 24, "text-anchor": "middle", "font-size": 11, fill: text }, head),
      s("text", { x: x + BOX / 2, y: y + 34, "text-anchor": "middle", "font-size": 11, fill: text }, tail.slice(0, 15)),
      s("text", { x: x + BOX / 2, y: y + 50, "text-anchor": "middle", "font-size": 11, fill: text }, state.toLowerCase().slice(0, 18)));
    return box;
  });
  if (entry.commit !== null) {
    const x = LEFT + entry.commit * (BOX + GAP) - GAP / 2;
    svg.append(s("line", { x1: x, x2: x, y1: 6, y2: H - 4, stroke: "#2b7a2b", "stroke-width": 2, "stroke-dasharray": "4 3" }),
               s("text", { x: x + 4, y: 14, "font-size": 11, fill: "#2b7a2b" }, "commit boundary: the side effect exists from here"));
  }
  for (const [i, attempt] of entry.attempts) {
    const x = LEFT + i * (BOX + GAP) + BOX / 2;
    svg.append(s("text", { x, y: y + 74, "text-anchor": "middle", "font-size": 11, fill: attempt > 1 ? "#c44e52" : "#555" },
                 attempt > 1 ? `retry: attempt ${attempt}` : `attempt ${attempt}`));
  }
  return { svg, boxes };
}

function render({ model, el }) {
  const root = frame(el, "scenarios", CSS, "next back", "lk-scn");
  let index = 0, view = null;
  const scenario = picker("scenario", "scenario", () => { index = 0; draw(); });
  const crash = picker("crash", "crash point", () => ask(model, { scenario: scenario.value.split(" + ")[0], crash: crash.value || null }));
  const steps = stepper((i) => go(i));
  const description = h("div", { class: "lk-label", "data-role": "description" });
  const summary = h("div", { class: "lk-label", "data-role": "summary" });
  const { box: figure, cue } = scroller("follows-step", "the scenario's events");
  const current = h("div", { "data-role": "current" });
  const journal = h("table", { class: "lk-journal", "data-role": "journal" });
  root.append(h("div", { class: "lk-controls" }, labelled("scenario", scenario), crash, ...steps.nodes),
              description, summary, figure, cue, current, h("div", { class: "lk-label" }, "journal (rows written so far in black; rows still to come in grey italics):"), journal);

  function setup() {
    const data = modelData(model);
    choices(scenario, Object.keys(data.scenarios || {}), data.start);
    const live = Boolean(model.get("live")) && Array.isArray(data.crash_points);
    crash.style.display = live ? "" : "none";
    if (live) choices(crash, ["", ...data.crash_points], "", (c) => (c ? `crash ${c}` : "no crash"));
    index = 0; view = null;
    draw();
  }

  function go(i) {
    const entry = (modelData(model).scenarios || {})[scenario.value];
    index = Math.max(0, Math.min(entry.events.length - 1, i));
    draw();
  }

  function draw() {
    const entry = (modelData(model).scenarios || {})[scenario.value];
    if (!entry) { painted(root); return; }
    if (!view || view.entry !== entry) {
      root.querySelector(".lk-alts").replaceChildren();
      view = { entry, ...buildTimeline(root, entry) };
      figure.replaceChildren(view.svg);
      description.textContent = `${scenario.value}: ${entry.description}`;
      const d = entry.divergence;
      summary.textContent = `ends ${entry.final_state} (request ${entry.request_status}); `
        + `commit boundary ${entry.commit === null ? "never crossed" : "at " + entry.events[entry.commit][0]}; `
        + `${entry.attempts.length} attempt(s); `
        + (d ? `first divergence from the happy path at ${d.event_id} (${d.rule}: ${d.field})` : "the happy path itself");
    }
    view.boxes.forEach((box, i) => box.classList.toggle("lk-current", i === index));
    follow(figure, LEFT + index * (BOX + GAP) + BOX / 2);
    const [id, type, state, detail] = entry.events[index];
    const side = entry.commit !== null && index >= entry.commit ? "the side effect exists" : "no side effect yet";
    steps.text.textContent = `event ${index + 1} of ${entry.events.length}`;
    steps.show(index, entry.events.length);
    current.replaceChildren(h("b", {}, `${id} ${type}`), ` — state ${state || "(none)"}; ${side}`, detail ? h("div", { class: "lk-mono" }, detail) : "");
    const seen = new Set(entry.events.slice(0, index + 1).map((row) => row[0]));
    journal.replaceChildren(...entry.journal.map(([from, to, event]) =>
      h("tr", { class: seen.has(event) ? "" : "lk-future" }, h("td", {}, event || "—"), h("td", {}, `${from || "∅"} → ${to}`))));
    painted(root, `${steps.text.textContent}: ${id} ${type}, state ${state || "(none)"}; ${side}`);
  }

  return start(model, root, setup, () => draw());
}

export default { render };
