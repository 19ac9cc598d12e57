// The tool-call scenario player: pick a scenario; its golden trace is a row of event boxes
// coloured by state (blue before the commit, green once the side effect exists, pink for a
// failure state, red for a crash), the commit boundary drawn as a line, each attempt marked.
// Step through the events: the current one is outlined and the journal rows written up to
// it are listed.  Data: labkit.reader.players.scenarios.

import { h, s, modelData, start, ask, picker, choices, labelled, stepper, follow, painted, frame, describe, scroller, ink, say, pick } from "./_shared.mjs";

// Every word the player shows, in each edition's language (event IDs, types, states, scenario and
// crash-point names and journal rows are data; the descriptions come in both: data.words).
const WORDS = {
  en: { alt: "the scenario's events, coloured by state, with the commit boundary", atCommit: " (commit boundary)",
        commit: "commit boundary: the side effect exists from here", retry: "retry: attempt {n}", attempt: "attempt {n}",
        scenario: "scenario", crash: "crash point", box: "the scenario's events",
        journal: "journal (rows written so far in black; rows still to come in grey italics):",
        crashAt: "crash {point}", noCrash: "no crash",
        ends: "ends {state} (request {status}); ", never: "commit boundary never crossed; ", crossed: "commit boundary at {id}; ",
        attempts: "{n} attempt(s); ", diverges: "first divergence from the happy path at {id} ({rule}: {field})",
        happy: "the happy path itself", exists: "the side effect exists", notYet: "no side effect yet",
        eventOf: "event {i} of {n}", state: " — state {state}; {side}", none: "(none)",
        status: "{step}: {id} {type}, state {state}; {side}" },
  zh: { alt: "这个场景的事件，按状态着色，并标出提交边界", atCommit: "（提交边界）",
        commit: "提交边界：从这里起副作用已经存在", retry: "重试：第 {n} 次尝试", attempt: "第 {n} 次尝试",
        scenario: "场景", crash: "崩溃点", box: "这个场景的事件",
        journal: "日志（已写入的行为黑色；尚未写入的行为灰色斜体）：",
        crashAt: "在 {point} 崩溃", noCrash: "不崩溃",
        ends: "结束于 {state}（请求 {status}）；", never: "从未越过提交边界；", crossed: "提交边界在 {id}；",
        attempts: "{n} 次尝试；", diverges: "与正常路径的第一次分歧在 {id}（{rule}：{field}）",
        happy: "这就是正常路径本身", exists: "副作用已经存在", notYet: "尚无副作用",
        eventOf: "第 {i} 个事件，共 {n} 个", state: " — 状态 {state}；{side}", none: "（无）",
        status: "{step}：{id} {type}，状态 {state}；{side}" },
};

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
  const alt = describe(root, svg, say(WORDS, "alt"));
  alt.textContent = events.map(([id, type, state], i) => `${id} ${type} ${state}` + (i === entry.commit ? say(WORDS, "atCommit") : "")).join("; ");
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
               s("text", { x: x + 4, y: 14, "font-size": 11, fill: "#2b7a2b" }, say(WORDS, "commit")));
  }
  for (const [i, attempt] of entry.attempts) {
    const x = LEFT + i * (BOX + GAP) + BOX / 2;
    svg.append(s("text", { x, y: y + 74, "text-anchor": "middle", "font-size": 11, fill: attempt > 1 ? "#c44e52" : "#555" },
                 say(WORDS, attempt > 1 ? "retry" : "attempt", { n: attempt })));
  }
  return { svg, boxes };
}

function render({ model, el }) {
  const root = frame(el, "scenarios", CSS, "next back", "lk-scn");
  let index = 0, view = null;
  const scenario = picker("scenario", say(WORDS, "scenario"), () => { index = 0; draw(); });
  const crash = picker("crash", say(WORDS, "crash"), () => ask(model, { scenario: scenario.value.split(" + ")[0], crash: crash.value || null }));
  const steps = stepper((i) => go(i));
  const description = h("div", { class: "lk-label", "data-role": "description" });
  const summary = h("div", { class: "lk-label", "data-role": "summary" });
  const { box: figure, cue } = scroller("follows-step", say(WORDS, "box"));
  const current = h("div", { "data-role": "current" });
  const journal = h("table", { class: "lk-journal", "data-role": "journal" });
  root.append(h("div", { class: "lk-controls" }, labelled(say(WORDS, "scenario"), scenario), crash, ...steps.nodes),
              description, summary, figure, cue, current, h("div", { class: "lk-label" }, say(WORDS, "journal")), journal);

  function setup() {
    const data = modelData(model);
    choices(scenario, Object.keys(data.scenarios || {}), data.start);
    const live = Boolean(model.get("live")) && Array.isArray(data.crash_points);
    crash.style.display = live ? "" : "none";
    if (live) choices(crash, ["", ...data.crash_points], "", (c) => (c ? say(WORDS, "crashAt", { point: c }) : say(WORDS, "noCrash")));
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
      description.textContent = `${scenario.value}: ${pick(entry.description)}`;
      const d = entry.divergence;
      summary.textContent = say(WORDS, "ends", { state: entry.final_state, status: entry.request_status })
        + (entry.commit === null ? say(WORDS, "never") : say(WORDS, "crossed", { id: entry.events[entry.commit][0] }))
        + say(WORDS, "attempts", { n: entry.attempts.length })
        + (d ? say(WORDS, "diverges", { id: d.event_id, rule: d.rule, field: d.field }) : say(WORDS, "happy"));
    }
    view.boxes.forEach((box, i) => box.classList.toggle("lk-current", i === index));
    follow(figure, LEFT + index * (BOX + GAP) + BOX / 2);
    const [id, type, state, detail] = entry.events[index];
    const side = say(WORDS, entry.commit !== null && index >= entry.commit ? "exists" : "notYet");
    steps.text.textContent = say(WORDS, "eventOf", { i: index + 1, n: entry.events.length });
    steps.show(index, entry.events.length);
    current.replaceChildren(h("b", {}, `${id} ${type}`), say(WORDS, "state", { state: state || say(WORDS, "none"), side }), detail ? h("div", { class: "lk-mono" }, detail) : "");
    const seen = new Set(entry.events.slice(0, index + 1).map((row) => row[0]));
    journal.replaceChildren(...entry.journal.map(([from, to, event]) =>
      h("tr", { class: seen.has(event) ? "" : "lk-future" }, h("td", {}, event || "—"), h("td", {}, `${from || "∅"} → ${to}`))));
    painted(root, say(WORDS, "status", { step: steps.text.textContent, id, type, state: state || say(WORDS, "none"), side }));
  }

  return start(model, root, setup, () => draw());
}

export default { render };
