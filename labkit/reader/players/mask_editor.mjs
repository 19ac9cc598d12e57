// The mask editor of lab 02: split a packed row of eight tokens into documents and pick the
// assistant targets; left, the document-causal attention allowed[i, j]; right, the document
// IDs, the targets and the prediction mask i → i+1.  Every state was computed by
// labkit.labs.masks (data: labkit.reader.players.mask_editor); nothing is decided here.

import { h, s, modelData, start, painted, frame, describe, say, pick, language } from "./_shared.mjs";

// Every word the player shows, in each edition's language (the example rows' names come in both:
// the data's "names"; allowed[i, j] and the numbers stay as they are).
const WORDS = {
  en: { preset: "example row", split: "new document after token {i}", target: "token {j} is a target",
        allowed: "allowed[i, j]: j ≤ i, same document", rows: ["document ID", "target token", "prediction i→i+1"],
        allowedAlt: "allowed[i, j]: which earlier tokens j each token i attends to",
        rowsAlt: "document ID, target token and prediction mask per position", example: "example",
        splits: "new document after token: ", targets: "assistant target: ", attends: "token {i} attends to {js}",
        rowsText: "document IDs {ids}; targets {targets}; prediction i→i+1 {prediction}",
        summary: "prediction mask [{mask}] · supervised positions [{positions}]", status: "supervised positions {positions}",
        none: "none" },
  zh: { preset: "示例行", split: "在 token {i} 之后开始新文档", target: "token {j} 是目标",
        allowed: "allowed[i, j]：j ≤ i，且属于同一文档", rows: ["文档 ID", "目标 token", "预测 i→i+1"],
        allowedAlt: "allowed[i, j]：每个 token i 关注哪些更早的 token j",
        rowsAlt: "每个位置的文档 ID、目标 token 与预测 mask", example: "示例",
        splits: "在此 token 之后开始新文档：", targets: "助手目标：", attends: "token {i} 关注 {js}",
        rowsText: "文档 ID {ids}；目标 {targets}；预测 i→i+1 {prediction}",
        summary: "预测 mask [{mask}] · 受监督的位置 [{positions}]", status: "受监督的位置 {positions}",
        none: "无" },
};

const CSS = `
.lk-mask .lk-on { fill: #6a9fd4; } .lk-mask .lk-off { fill: #f2f2f2; }
.lk-mask .lk-yes { fill: #7fc47f; } .lk-mask .lk-no { fill: #f2f2f2; } .lk-mask .lk-doc1 { fill: #d9ead3; } .lk-mask .lk-doc0 { fill: #fff; }
.lk-mask .lk-panels { gap: 12px; }
`;
const CELL = 24;

function grid(n, rows, left, top, w) {
  const svg = s("svg", { width: w, height: top + rows * CELL + 22, viewBox: `0 0 ${w} ${top + rows * CELL + 22}` });
  const cells = [], labels = [];
  for (let r = 0; r < rows; r++) for (let c = 0; c < n; c++) {
    const x = left + c * CELL, y = top + r * CELL;
    const cell = s("rect", { x, y, width: CELL - 2, height: CELL - 2 });
    const label = s("text", { x: x + CELL / 2 - 1, y: y + CELL / 2 + 3, "font-size": 11, "text-anchor": "middle" });
    svg.append(cell, label);
    cells.push(cell); labels.push(label);
  }
  for (let c = 0; c < n; c++) svg.append(s("text", { x: left + c * CELL + CELL / 2 - 1, y: top + rows * CELL + 14, "font-size": 11, "text-anchor": "middle", fill: "#555" }, String(c)));
  return { svg, cells, labels };
}

function render({ model, el }) {
  const root = frame(el, "mask_editor", CSS, "preset", "lk-mask");
  const preset = h("select", { "data-control": "preset", "aria-label": say(WORDS, "preset"), onchange: () => apply() });
  const splits = [], targets = [];
  for (let i = 0; i < 7; i++) splits.push(h("input", { type: "checkbox", "data-control": `split${i}`, "aria-label": say(WORDS, "split", { i }), onchange: () => draw() }));
  for (let j = 0; j < 8; j++) targets.push(h("input", { type: "checkbox", "data-control": `target${j}`, "aria-label": say(WORDS, "target", { j }), onchange: () => draw() }));
  const summary = h("div", { class: "lk-label", "data-role": "supervised" });
  const panels = h("div", { class: "lk-panels" });
  const allowed = grid(8, 8, 40, 18, 40 + 8 * CELL + 6);
  allowed.svg.setAttribute("data-role", "allowed");
  allowed.svg.append(s("text", { x: 40, y: 12, "font-size": 11 }, say(WORDS, "allowed")));
  const rows = grid(8, 3, 130, 18, 130 + 8 * CELL + 6);
  rows.svg.setAttribute("data-role", "masks");
  (WORDS[language()] || WORDS.en).rows.forEach((name, r) =>
    rows.svg.append(s("text", { x: 124, y: 18 + r * CELL + CELL / 2 + 3, "font-size": 11, "text-anchor": "end" }, name)));
  panels.append(allowed.svg, rows.svg);
  const allowedAlt = describe(root, allowed.svg, say(WORDS, "allowedAlt"));
  const rowsAlt = describe(root, rows.svg, say(WORDS, "rowsAlt"));
  root.append(h("div", { class: "lk-controls" }, h("label", {}, `${say(WORDS, "example")} `, preset)),
              h("div", { class: "lk-controls" }, say(WORDS, "splits"), ...splits.map((c, i) => h("label", {}, c, String(i)))),
              h("div", { class: "lk-controls" }, say(WORDS, "targets"), ...targets.map((c, j) => h("label", {}, c, String(j)))),
              summary, panels);

  function apply() {
    const [split, chosen] = modelData(model).presets[preset.value];
    splits.forEach((c, i) => { c.checked = Boolean((split >> i) & 1); });
    targets.forEach((c, j) => { c.checked = Boolean((chosen >> j) & 1); });
    draw();
  }

  function setup() {
    const data = modelData(model);
    preset.replaceChildren(...Object.keys(data.presets).map((p) => h("option", { value: p }, pick((data.names || {})[p] ?? p))));
    preset.value = data.start;
    apply();
  }

  function draw() {
    const data = modelData(model);
    const split = splits.reduce((b, c, i) => b | (c.checked ? 1 << i : 0), 0);
    const chosen = targets.reduce((b, c, j) => b | (c.checked ? 1 << j : 0), 0);
    const index = split * 256 + chosen, prediction = parseInt(data.prediction.slice(2 * index, 2 * index + 2), 16);
    data.allowed[split].forEach((row, i) => {
      for (let j = 0; j < 8; j++) {
        const on = Boolean((row >> j) & 1);
        allowed.cells[i * 8 + j].setAttribute("class", on ? "lk-on" : "lk-off");
        allowed.labels[i * 8 + j].textContent = on ? "1" : "";
      }
    });
    for (let j = 0; j < 8; j++) {
      const doc = data.ids[split][j];
      rows.cells[j].setAttribute("class", doc % 2 ? "lk-doc1" : "lk-doc0");
      rows.labels[j].textContent = String(doc);
      const target = Boolean((chosen >> j) & 1);
      rows.cells[8 + j].setAttribute("class", target ? "lk-yes" : "lk-no");
      rows.labels[8 + j].textContent = target ? "1" : "0";
      const predicted = j < 7 && Boolean((prediction >> j) & 1);
      rows.cells[16 + j].setAttribute("class", j < 7 ? (predicted ? "lk-yes" : "lk-no") : "lk-doc0");
      rows.labels[16 + j].textContent = j < 7 ? (predicted ? "1" : "0") : "";
    }
    const supervised = [0, 1, 2, 3, 4, 5, 6].filter((i) => (prediction >> i) & 1);
    allowedAlt.textContent = data.allowed[split].map((row, i) =>
      say(WORDS, "attends", { i, js: [0, 1, 2, 3, 4, 5, 6, 7].filter((j) => (row >> j) & 1).join(" ") })).join("; ");
    rowsAlt.textContent = say(WORDS, "rowsText", { ids: data.ids[split].join(" "), targets: [0, 1, 2, 3, 4, 5, 6, 7].map((j) => (chosen >> j) & 1).join(" "),
                                                   prediction: [0, 1, 2, 3, 4, 5, 6].map((i) => (prediction >> i) & 1).join(" ") });
    summary.textContent = say(WORDS, "summary", { mask: [0, 1, 2, 3, 4, 5, 6].map((i) => (prediction >> i) & 1).join(", "), positions: supervised.join(", ") });
    painted(root, say(WORDS, "status", { positions: supervised.join(", ") || say(WORDS, "none") }));
  }

  return start(model, root, setup);
}

export default { render };
