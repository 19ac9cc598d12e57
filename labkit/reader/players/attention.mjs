// The attention/mask viewer: heatmaps of attention weights (viridis-like, 0…1, the weight
// written in each allowed cell) or of masks (allowed cells filled), blocked cells grey.
// Groups: trace one's prefill attention, the causal and packed-document masks, and the
// lab decoder's decode step with k cached tokens under the causal (bottom-right) or the
// top-left rectangular mask.  Data: labkit.reader.players.attention.

import { h, s, modelData, start, fmt, painted, frame } from "./_shared.mjs";

const CSS = `.lk-att .lk-heads { display: flex; flex-wrap: wrap; gap: 12px; }`;

/** A compact viridis ramp (5 stops), value 0…1 → "rgb(…)". */
const RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function viridis(v) {
  const x = Math.max(0, Math.min(1, v)) * (RAMP.length - 1), i = Math.min(RAMP.length - 2, Math.floor(x)), f = x - i;
  const c = RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// A heatmap's skeleton (cells, labels) is built once per shape and labels; a change of
// panel only refills the cells and rewrites their numbers, so the labels (CJK pieces in
// trace one) are never laid out again.
function skeleton(panel) {
  const R = panel.rows.length, C = panel.cols.length, cell = Math.max(18, Math.min(34, Math.floor(300 / C)));
  const left = 72, top = 22, W = left + C * cell + 8, H = top + R * cell + 56;
  // two layers: the labels (SVG, never touched again) under the cells (a canvas, repainted
  // per panel), so a change costs no text layout at all
  const labels = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "aria-hidden": "true" });
  for (let i = 0; i < R; i++) {
    labels.append(s("text", { x: left - 4, y: top + i * cell + cell / 2 + 3, "text-anchor": "end", "font-size": 11 }, panel.rows[i]));
  }
  panel.cols.forEach((label, j) => {
    const x = left + j * cell + cell / 2, y = top + R * cell + 6;
    labels.append(s("text", { x, y, "font-size": 11, "text-anchor": "end", transform: `rotate(-60 ${x} ${y})` }, label));
  });
  const ratio = Math.max(1, Math.round(globalThis.devicePixelRatio || 1));
  const canvas = h("canvas", { width: W * ratio, height: (top + R * cell) * ratio, role: "img", "data-role": "heatmap",
                               style: `position:absolute; left:0; top:0; width:${W}px; height:${top + R * cell}px` });
  const ctx = canvas.getContext("2d");
  const box = h("div", { style: `position:relative; width:${W}px; height:${H}px` }, labels, canvas);
  function show(panel2, head, key) {
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, W, top + R * cell);
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.fillStyle = "#222";
    ctx.textAlign = "left";
    ctx.fillText(head.title, left, 13);
    ctx.font = `${cell > 26 ? 8 : 7}px system-ui, sans-serif`;
    ctx.textAlign = "center";
    head.values.forEach((row, i) => row.forEach((v, j) => {
      const x = left + j * cell, y = top + i * cell;
      ctx.fillStyle = v === null ? "#e0e0e0" : panel2.kind === "mask" ? "#4c72b0" : viridis(v);
      ctx.fillRect(x, y, cell - 1, cell - 1);
      if (v !== null) {
        ctx.fillStyle = panel2.kind === "mask" || v < 0.6 ? "#fff" : "#000";
        ctx.fillText(panel2.kind === "mask" ? "1" : fmt(v, 2), x + cell / 2 - 0.5, y + cell / 2 + 3);
      }
    }));
    canvas.dataset.state = key;
    canvas.dataset.blocked = String(head.values.flat().filter((v) => v === null).length);
    canvas.dataset.cells = JSON.stringify(head.values.map((row) => row.map((v) => (v === null ? 0 : 1))));
  }
  return { svg: box, show };
}

function render({ model, el }) {
  const root = frame(el, "attention", CSS, "", "lk-att");
  const group = h("select", { "data-control": "group", "aria-label": "view", onchange: () => { buildControls(); draw(); } });
  const controlBox = h("span", { class: "lk-controls", style: "margin:0" });
  const caption = h("div", { class: "lk-label", "data-role": "caption" });
  const heads = h("div", { class: "lk-heads" });
  root.append(h("div", { class: "lk-controls" }, h("label", {}, "view ", group), controlBox), caption, heads);
  let pickers = [];
  const skeletons = new Map();

  function buildControls() {
    const data = modelData(model), g = data.groups[group.value], initial = data.initial || {};
    pickers = g.controls.map((c) => {
      const picker = h("select", { "data-control": c.name, "aria-label": c.label, onchange: () => draw() },
                       ...c.options.map((o) => h("option", { value: o }, o)));
      if (c.options.includes(initial[c.name])) picker.value = initial[c.name];
      return picker;
    });
    controlBox.replaceChildren(...g.controls.map((c, k) => h("label", {}, `${c.label} `, pickers[k])));
    root.dataset.steps = g.controls.length ? g.controls[0].name : "";
  }

  function setup() {
    const data = modelData(model);
    const names = Object.keys(data.groups || {});
    group.replaceChildren(...names.map((n) => h("option", { value: n }, data.groups[n].title)));
    group.value = names.includes(data.start) ? data.start : names[0];
    buildControls();
    draw();
  }

  function draw() {
    const g = modelData(model).groups[group.value];
    const panel = g && g.panels[pickers.map((p) => p.value).join("|")];
    if (!panel) { heads.replaceChildren(); painted(root); return; }
    caption.textContent = panel.caption;
    const views = panel.heads.map((head, k) => {
      const key = `${group.value}/${k}/${panel.rows.join("\u0001")}|${panel.cols.join("\u0001")}`;
      if (!skeletons.has(key)) skeletons.set(key, skeleton(panel));
      const view = skeletons.get(key);
      view.show(panel, head, `${pickers.map((p) => p.value).join("|")}/${k}`);
      return view.svg;
    });
    if (views.some((svg, k) => heads.children[k] !== svg) || heads.children.length !== views.length) {
      heads.replaceChildren(...views);
    }
    painted(root);
  }

  return start(model, root, setup);
}

export default { render };
