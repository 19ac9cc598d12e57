// The first-divergence explorer: pick a trace and a fault; the golden trace (top row) and
// the faulty run (bottom row) are drawn event by event, the first divergent event in red,
// the events after it faded (consequences, not new causes), with its rule, field, both
// values and the suspect.  Data: labkit.reader.players.divergence.

import { h, s, modelData, start, follow, painted, frame, describe, scroller, say, pick } from "./_shared.mjs";

// Every word the player shows, in each edition's language (event IDs and types, rules, fields,
// values and fault names are data; the faults' descriptions and suspects come in both: data.words).
const WORDS = {
  en: { alt: "the golden trace and the faulty run, event by event", golden: "golden", faulty: "faulty: {fault}",
        firstAt: "; first divergence at event #{index}", noDivergence: "no divergence", noEvent: "(no event)",
        trace: "trace", fault: "fault", box: "the two traces, event by event",
        identical: "identical traces: no divergence",
        first: "first divergence at event #{index} ({a} vs {b}, {type})", rule: "rule", field: "field",
        faultyRow: "faulty ({fault})", suspect: "suspect", status: "first divergence at event #{index}, {field}" },
  zh: { alt: "黄金轨迹与注入失败的运行，逐个事件", golden: "黄金轨迹", faulty: "注入失败：{fault}",
        firstAt: "；第一次分歧在事件 #{index}", noDivergence: "没有分歧", noEvent: "（没有事件）",
        trace: "轨迹", fault: "失败注入", box: "两条轨迹，逐个事件",
        identical: "两条轨迹相同：没有分歧",
        first: "第一次分歧在事件 #{index}（{a} 对 {b}，{type}）", rule: "规则", field: "字段",
        faultyRow: "注入失败（{fault}）", suspect: "嫌疑", status: "第一次分歧在事件 #{index}，{field}" },
};

const CSS = `
.lk-div .lk-before { fill: #4c72b0; }
.lk-div .lk-first { fill: #c44e52; }
.lk-div .lk-after { fill: #999; opacity: 0.45; }
.lk-div .lk-faded { fill: #6e6e6e; }
.lk-div table { border-collapse: collapse; margin-top: 4px; }
.lk-div td { padding: 1px 8px 1px 0; vertical-align: top; }
.lk-div td:first-child { color: #666; }
`;

// One SVG per trace kind, sized for its longest run; a fault change only re-labels and
// re-colours the circles it already has (no new elements per change).
function buildTimelines(root, kind) {
  const runs = Object.values(kind.faults).map((f) => f.events.length);
  const n = Math.max(kind.golden.length, ...runs), step = 30, left = 24;
  const W = left + n * step + 150, H = 170;
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-role": "timelines" });
  const alt = describe(root, svg, say(WORDS, "alt"));
  const marker = s("line", { y1: 10, y2: H - 8, stroke: "#c44e52", "stroke-dasharray": "3 3" });
  svg.append(marker);
  const rows = [54, 124].map((y, r) => {
    // the row's name sits above its first events (never cut at the left edge)
    const name = s("text", { x: 4, y: r === 0 ? 12 : y - 12, "font-size": 11, "font-weight": 600 });
    const rule = s("line", { x1: left, y1: y, y2: y, stroke: "#ccc" });
    const type = s("text", { "font-size": 11, fill: "#c44e52", y: y + (r === 0 ? -20 : 32) });
    svg.append(name, rule);
    const dots = [], ids = [], tips = [];
    for (let i = 0; i < n; i++) {
      const x = left + i * step;
      tips.push(s("title"));
      dots.push(s("circle", { cx: x, cy: y }, tips[i]));
      ids.push(s("text", { x, y: r === 0 ? y - 10 : y + 19, "text-anchor": "middle", "font-size": 11 }));
    }
    svg.append(...dots, ...ids, type);
    return { y, name, rule, type, dots, ids, tips };
  });

  function show(events2, found, faultName) {
    const split = found ? found.index : n;
    marker.setAttribute("visibility", found ? "visible" : "hidden");
    if (found) { marker.setAttribute("x1", left + found.index * step); marker.setAttribute("x2", left + found.index * step); }
    const named = [[kind.golden, say(WORDS, "golden")], [events2, say(WORDS, "faulty", { fault: faultName })]];
    alt.textContent = named.map(([events, label]) => `${label}: ${events.map(([id, type]) => `${id} ${type}`).join(", ")}`).join("; ")
      + (found ? say(WORDS, "firstAt", { index: found.index }) : `; ${say(WORDS, "noDivergence")}`);
    named.forEach(([events, label], r) => {
      const row = rows[r];
      row.name.textContent = label;
      row.rule.setAttribute("x2", left + Math.max(0, events.length - 1) * step);
      for (let i = 0; i < n; i++) {
        const here = i < events.length;
        row.dots[i].setAttribute("visibility", here ? "visible" : "hidden");
        row.ids[i].setAttribute("visibility", here ? "visible" : "hidden");
        if (!here) continue;
        const [id, type] = events[i];
        row.dots[i].setAttribute("class", i < split ? "lk-before" : i === split ? "lk-first" : "lk-after");
        row.dots[i].setAttribute("r", i === split ? 7 : 5);
        row.tips[i].textContent = `${id} ${type}`;
        row.ids[i].textContent = id;
        row.ids[i].setAttribute("class", i > split ? "lk-faded" : "");
      }
      const shown = found && found.index < events.length;
      row.type.setAttribute("visibility", shown ? "visible" : "hidden");
      if (shown) {
        row.type.setAttribute("x", left + found.index * step + 9);
        row.type.textContent = found.types[r] || say(WORDS, "noEvent");
      }
    });
  }
  return { svg, show, x: (i) => left + i * step };
}

function render({ model, el }) {
  const root = frame(el, "divergence", CSS, "fault", "lk-div");
  let view = null;
  const kindPicker = h("select", { "data-control": "kind", "aria-label": say(WORDS, "trace"), onchange: () => pickKind(kindPicker.value) });
  const faultPicker = h("select", { "data-control": "fault", "aria-label": say(WORDS, "fault"), onchange: () => draw() });
  const description = h("div", { class: "lk-label", "data-role": "description" });
  const { box: figure, cue } = scroller("follows-step", say(WORDS, "box"));
  const verdict = h("div", { "data-role": "verdict" });
  root.append(h("div", { class: "lk-controls" }, h("label", {}, `${say(WORDS, "trace")} `, kindPicker), h("label", {}, `${say(WORDS, "fault")} `, faultPicker)),
              description, figure, cue, verdict);

  function pickKind(kind, fault) {
    const kinds = modelData(model).kinds || {};
    const names = Object.keys((kinds[kind] || {}).faults || {});
    faultPicker.replaceChildren(...names.map((f) => h("option", { value: f }, f)));
    faultPicker.value = fault && names.includes(fault) ? fault : names[0];
    draw();
  }

  function setup() {
    const data = modelData(model);
    const kinds = Object.keys(data.kinds || {});
    kindPicker.replaceChildren(...kinds.map((k) => h("option", { value: k }, k)));
    const [kind, fault] = data.start || [kinds[0]];
    kindPicker.value = kind;
    pickKind(kind, fault);
  }

  function draw() {
    const kind = (modelData(model).kinds || {})[kindPicker.value];
    const entry = kind && kind.faults[faultPicker.value];
    if (!entry) { figure.replaceChildren(); painted(root); return; }
    const found = entry.divergence;
    description.textContent = `${faultPicker.value}: ${pick(entry.description)}`;
    if (!view || view.kind !== kind) {
      root.querySelector(".lk-alts").replaceChildren();
      view = { kind, ...buildTimelines(root, kind) };
      figure.replaceChildren(view.svg);
    }
    view.show(entry.events, found, faultPicker.value);
    follow(figure, found ? view.x(found.index) : 0);
    if (!found) {
      verdict.replaceChildren(h("b", {}, say(WORDS, "identical")));
    } else {
      const row = (k, v) => h("tr", {}, h("td", {}, k), h("td", { class: "lk-mono" }, v));
      verdict.replaceChildren(
        h("div", {}, h("b", {}, say(WORDS, "first", { index: found.index, a: found.event_ids[0] || "—", b: found.event_ids[1] || "—",
                                                         type: found.types[0] || found.types[1] }))),
        h("table", {}, row(say(WORDS, "rule"), found.rule), row(say(WORDS, "field"), found.field), row(say(WORDS, "golden"), found.golden),
          row(say(WORDS, "faultyRow", { fault: faultPicker.value }), found.faulty), row(say(WORDS, "suspect"), pick(found.suspect))));
    }
    painted(root, `${faultPicker.value}: ` + (found ? say(WORDS, "status", { index: found.index, field: found.field }) : say(WORDS, "noDivergence")));
  }

  return start(model, root, setup, () => draw());
}

export default { render };
