// The attention/mask viewer: heatmaps of attention weights (viridis-like, 0…1, the weight
// written in each allowed cell) or of masks (allowed cells filled), blocked cells grey.
// Groups: trace one's prefill attention, the causal and packed-document masks, and the
// lab decoder's decode step with k cached tokens under the causal (bottom-right) or the
// top-left rectangular mask.  Data: labkit.reader.players.attention.

import { h, s, modelData, start, fmt, textWidth, FONT, painted, frame, describe, ink, widthOf, scroller, say, pick } from "./_shared.mjs";

// Every word the player shows, in each edition's language (the groups' titles, the pickers' labels,
// the captions and the heads' titles come with the data, in both: data.words).
const WORDS = {
  en: { alt: "head {k}: {what}, rows {rows} queries, columns {cols} keys", mask: "mask", weights: "attention weights",
        row: "attention heads, wider than the column", cue: "⇆ wider than the column: scroll it sideways",
        sees: "{row} sees {keys}", most: "{row} most on {col} ({v})", view: "view",
        decimals: "{caption}; a cell's weight to 2 decimals (.25 = 0.25)" },
  zh: { alt: "头 {k}：{what}，行为 {rows} 个查询，列为 {cols} 个键", mask: "mask", weights: "注意力权重",
        row: "注意力头，比栏宽", cue: "⇆ 比栏宽：左右滚动查看",
        sees: "{row} 看到 {keys}", most: "{row} 最关注 {col}（{v}）", view: "视图",
        decimals: "{caption}；格中权重保留 2 位小数（.25 = 0.25）" },
};

/** A compact viridis ramp (5 stops), value 0…1 → "rgb(…)". */
const RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function viridis(v) {
  const x = Math.max(0, Math.min(1, v)) * (RAMP.length - 1), i = Math.min(RAMP.length - 2, Math.floor(x)), f = x - i;
  const c = RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// A panel's skeleton (labels, one canvas per head) is built once per shape and labels; a change
// of panel only repaints the canvases, so the labels (CJK pieces in trace one) are never laid out
// again.  Every text is 11 px: as many heads sit side by side as the player's width holds with
// cells of at least 22 px (all of them in the 725-px text column; one a row on a phone), the cells
// as large as that leaves (22–34 px), a weight written without its leading zero (.25 = 0.25).
const COLUMN = 700, GAP = 16, PAD = 8, TOP = 20, TEXT = 11, MIN_CELL = 22;

function cellText(kind, v) {
  if (kind === "mask") return "1";
  return v >= 0.995 ? "1" : fmt(v, 2).slice(1);
}

function skeleton(panel, width, root) {
  panel = { ...panel, rows: panel.rows.map(pick), cols: panel.cols.map(pick) };
  const R = panel.rows.length, C = panel.cols.length, n = panel.heads.length;
  const left = Math.ceil(Math.max(...panel.rows.map((r) => textWidth(r)))) + 10;
  // the column labels run down-left at 60° from their column: as tall as the longest is wide · sin 60°
  const bottom = Math.ceil(Math.max(...panel.cols.map((c) => textWidth(c))) * Math.sin(Math.PI / 3)) + 16;
  const fits = (k) => Math.floor((width - left - PAD - (k - 1) * GAP) / (k * C));
  let perRow = n;
  while (perRow > 1 && fits(perRow) < MIN_CELL) perRow -= 1;
  const cell = Math.max(MIN_CELL, Math.min(34, fits(perRow)));
  const block = C * cell, H = TOP + R * cell + bottom;
  const x0 = (k) => left + (k % perRow) * (block + GAP);
  const ratio = Math.max(1, Math.round(globalThis.devicePixelRatio || 1));
  const boxes = [];
  for (let first = 0; first < n; first += perRow) boxes.push(rowOfHeads(panel, first, Math.min(n, first + perRow)));
  const alts = panel.heads.map(() => null);
  const box = h("div", {}, ...boxes.map((b) => b.box));
  const titles = boxes.flatMap((b) => b.titles), canvases = boxes.flatMap((b) => b.canvases);
  canvases.forEach((canvas, k) => { alts[k] = describe(root, canvas, say(WORDS, "alt", { k, what: say(WORDS, panel.kind === "mask" ? "mask" : "weights"), rows: panel.rows.length, cols: panel.cols.length })); });
  // one row of heads (from first to end): its labels (SVG) under its cells (a canvas per head);
  // too narrow for even one head at 22-px cells, it scrolls sideways (a marked box, with its cue)
  function rowOfHeads(panel, first, end) {
    const count = end - first, RW = left + count * block + (count - 1) * GAP + PAD;
  // two layers: the labels (SVG, never touched again) under the cells (canvases, repainted per
  // panel), so a change costs no text layout at all
  const labels = s("svg", { width: RW, height: H, viewBox: `0 0 ${RW} ${H}`, "aria-hidden": "true" });
  const titles = panel.heads.slice(first, end).map((head, k) => s("text", { x: x0(k), y: 13, "font-size": TEXT, "font-weight": 600 }));
  labels.append(...titles);
  panel.rows.forEach((label, i) => {
    labels.append(s("text", { x: left - 4, y: TOP + i * cell + cell / 2 + 4, "text-anchor": "end", "font-size": TEXT }, label));
  });
  for (let k = 0; k < count; k++) {
    panel.cols.forEach((label, j) => {
      const x = x0(k) + j * cell + cell / 2, y = TOP + R * cell + 8;
      labels.append(s("text", { x, y, "font-size": TEXT, "text-anchor": "end", transform: `rotate(-60 ${x} ${y})` }, label));
    });
  }
  const canvases = panel.heads.slice(first, end).map((head, k) => h("canvas", {
    width: block * ratio, height: (TOP + R * cell) * ratio, "data-role": "heatmap",
    style: `position:absolute; left:${x0(k)}px; top:0; width:${block}px; height:${TOP + R * cell}px` }));
  const inner = h("div", { style: `position:relative; width:${RW}px; height:${H}px` }, labels, ...canvases);
  if (RW <= width) return { box: inner, titles, canvases };
  const { box: scroll, cue } = scroller("heatmap-row", say(WORDS, "row"), say(WORDS, "cue"));
  scroll.append(inner);
  cue.hidden = false;
  return { box: h("div", {}, scroll, cue), titles, canvases };
  }
  function show(panel2, key) {
    panel2.heads.forEach((head, k) => {
      const canvas = canvases[k], ctx = canvas.getContext("2d");
      titles[k].textContent = pick(head.title);
      ctx.setTransform(ratio, 0, 0, ratio, 0, TOP * ratio);  // the cells start under the head's title
      ctx.clearRect(0, 0, block, R * cell);
      ctx.font = `${TEXT}px ${FONT}`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      head.values.forEach((row, i) => row.forEach((v, j) => {
        const x = j * cell, y = i * cell;
        ctx.fillStyle = v === null ? "#e0e0e0" : panel2.kind === "mask" ? "#4c72b0" : viridis(v);
        ctx.fillRect(x, y, cell - 1, cell - 1);
        if (v !== null) {
          ctx.fillStyle = panel2.kind === "mask" ? "#fff" : ink(viridis(v));
          ctx.fillText(cellText(panel2.kind, v), x + cell / 2 - 0.5, y + cell / 2);
        }
      }));
      canvas.dataset.state = `${key}/${k}`;
      canvas.dataset.blocked = String(head.values.flat().filter((v) => v === null).length);
      canvas.dataset.cells = JSON.stringify(head.values.map((row) => row.map((v) => (v === null ? 0 : 1))));
      alts[k].textContent = `${pick(head.title)}: ` + head.values.map((row, i) => {
        const seen = row.map((v, j) => [v, j]).filter(([v]) => v !== null);
        if (panel2.kind === "mask") return say(WORDS, "sees", { row: panel.rows[i], keys: seen.map(([, j]) => panel.cols[j]).join(" ") });
        const [v, j] = seen.reduce((a, b) => (b[0] > a[0] ? b : a), [-1, -1]);
        return say(WORDS, "most", { row: panel.rows[i], col: panel.cols[j], v: fmt(v, 2) });
      }).join("; ");
    });
  }
  return { box, show };
}

function render({ model, el }) {
  const root = frame(el, "attention", "", "", "lk-att");
  let width = widthOf(root);
  const group = h("select", { "data-control": "group", "aria-label": say(WORDS, "view"), onchange: () => { buildControls(); draw(); } });
  const controlBox = h("span", { class: "lk-controls", style: "margin:0" });
  const caption = h("div", { class: "lk-label", "data-role": "caption" });
  const heads = h("div", { class: "lk-heads" });
  root.append(h("div", { class: "lk-controls" }, h("label", {}, `${say(WORDS, "view")} `, group), controlBox), caption, heads);
  let pickers = [];
  const skeletons = new Map();

  function buildControls() {
    const data = modelData(model), g = data.groups[group.value], initial = data.initial || {};
    pickers = g.controls.map((c) => {
      const picker = h("select", { "data-control": c.name, "aria-label": pick(c.label), onchange: () => draw() },
                       ...c.options.map((o, i) => h("option", { value: o }, pick((c.shown || [])[i] ?? o))));
      if (c.options.includes(initial[c.name])) picker.value = initial[c.name];
      return picker;
    });
    controlBox.replaceChildren(...g.controls.map((c, k) => h("label", {}, `${pick(c.label)} `, pickers[k])));
    root.dataset.steps = g.controls.length ? g.controls[0].name : "";
  }

  function setup() {
    const data = modelData(model);
    const names = Object.keys(data.groups || {});
    group.replaceChildren(...names.map((n) => h("option", { value: n }, pick(data.groups[n].title))));
    group.value = names.includes(data.start) ? data.start : names[0];
    buildControls();
    draw();
  }

  function draw() {
    const g = modelData(model).groups[group.value];
    const choice = pickers.map((p) => p.value).join("|"), panel = g && g.panels[choice];
    if (!panel) { heads.replaceChildren(); painted(root); return; }
    caption.textContent = panel.kind === "mask" ? pick(panel.caption) : say(WORDS, "decimals", { caption: pick(panel.caption) });
    const key = `${width}/${group.value}/${panel.heads.length}/${panel.rows.map(pick).join("\u0001")}|${panel.cols.map(pick).join("\u0001")}`;
    if (!skeletons.has(key)) skeletons.set(key, skeleton(panel, Math.min(COLUMN, width), root));
    const view = skeletons.get(key);
    view.show(panel, choice);
    if (heads.firstChild !== view.box) heads.replaceChildren(view.box);
    painted(root, `${pick(g.title)}: ${pickers.map((p) => p.selectedOptions[0]?.textContent ?? p.value).join(", ")}`);
  }

  return start(model, root, setup, (now) => { width = now; skeletons.clear(); root.querySelector(".lk-alts").replaceChildren(); draw(); });
}

export default { render };
