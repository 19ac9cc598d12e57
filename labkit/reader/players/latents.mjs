// The DDIM latent player: move the step (999 → … → end) and the guidance scale; the four
// channels of z_t are coloured here from their (quantised) values — blue −, white 0, red +,
// ±2.5 — beside the decoded x̂₀ preview of that step, which replaces the previous frame.
// Data: labkit.reader.players.latents.

import { h, modelData, start, kernelRow, labelled, fmt, painted, frame, describe, say, pick } from "./_shared.mjs";

// Every word the player shows, in each edition's language (latent names such as z_999, channel
// names and numbers are data; what a preview shows comes in both: data.words).
const WORDS = {
  en: { slider: "DDIM step", scale: "guidance scale", typed: "new guidance scale", another: "another guidance scale",
        scaleInput: "scale", guidance: "guidance",
        caption: "channels of z_t coloured from their values: blue − · white 0 · red + (±2.5); "
          + "beside them (above, on a narrow page): the decoded preview of the step, replacing the previous frame",
        channelAlt: "channel {name} of z_t, coloured from its values", channel: "channel {name}", preview: "preview: {what}",
        label: "step {index}/{last} · {name} · guidance {scale} · preview: {what}",
        stats: "mean {mean} · std {std} · min {lo} · max {hi}", previewOf: "preview of {name}",
        status: "step {index} of {last}, {name}, guidance {scale}" },
  zh: { slider: "DDIM 步", scale: "引导强度", typed: "新的引导强度", another: "另一个引导强度",
        scaleInput: "强度", guidance: "引导",
        caption: "z_t 的各通道按数值着色：蓝 − · 白 0 · 红 +（±2.5）；"
          + "旁边（窄页面上在上方）：这一步解码后的预览，替换上一帧",
        channelAlt: "z_t 的通道 {name}，按数值着色", channel: "通道 {name}", preview: "预览：{what}",
        label: "第 {index}/{last} 步 · {name} · 引导 {scale} · 预览：{what}",
        stats: "均值 {mean} · 标准差 {std} · 最小 {lo} · 最大 {hi}", previewOf: "{name} 的预览",
        status: "第 {index} 步，共 {last} 步，{name}，引导 {scale}" },
};

const CSS = `
.lk-lat .lk-grid { display: grid; grid-template-columns: repeat(2, 140px) 200px; gap: 6px 10px; align-items: start; }
.lk-lat canvas, .lk-lat img.lk-preview { width: 128px; height: 128px; image-rendering: pixelated; border: 1px solid #ccc; display: block; }
.lk-lat img.lk-preview { width: 192px; height: 192px; image-rendering: auto; }
.lk-lat .lk-cap { font-size: 11px; color: #444; }
.lk-lat .lk-previewcell { grid-column: 3; grid-row: 1 / span 2; }
.lk-lat { container-type: inline-size; }
/* narrower than the three columns (a phone): the preview, the point of the viewer, first and
   across, the four channels two by two under it */
@container (max-width: 520px) {
  .lk-lat .lk-grid { grid-template-columns: repeat(2, 140px); }
  .lk-lat .lk-previewcell { grid-column: 1 / span 2; grid-row: 1; }
  .lk-lat .lk-channel { grid-row: auto !important; }
}
`;

/** Blue–white–red, as labkit's diverging colours: a 256-entry RGBA table for codes 0…255. */
function colourTable() {
  const table = new Uint8ClampedArray(256 * 4);
  for (let q = 0; q < 256; q++) {
    const t = q / 255 * 2 - 1, pos = Math.max(0, t), neg = Math.max(0, -t);
    table.set([Math.round((1 - neg * 0.8) * 255), Math.round((1 - Math.max(pos, neg) * 0.8) * 255),
               Math.round((1 - pos * 0.8) * 255), 255], q * 4);
  }
  return table;
}
const COLOURS = colourTable();

/** Base32 (A–Z, 2–7, no padding) → bytes. */
function decode(text) {
  const out = new Uint8Array(Math.floor(text.length * 5 / 8));
  let bits = 0, value = 0, k = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    value = (value << 5) | (c >= 65 ? c - 65 : c - 24);
    bits += 5;
    if (bits >= 8) { out[k++] = (value >>> (bits - 8)) & 255; bits -= 8; }
  }
  return out;
}

/** Base32 JPEG bytes → a data: URI (made here, so nothing is fetched). */
function jpegUri(text) {
  const bytes = decode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return "data:image/jpeg;base64," + btoa(bin);
}

function render({ model, el }) {
  const root = frame(el, "latents", CSS, "back next", "lk-lat");
  const slider = h("input", { type: "range", min: 0, step: 1, "data-control": "step", "aria-label": say(WORDS, "slider"), oninput: () => draw() });
  const back = h("button", { type: "button", "data-control": "back", onclick: () => { slider.value = String(Number(slider.value) - 1); draw(); } }, "◀");
  const next = h("button", { type: "button", "data-control": "next", onclick: () => { slider.value = String(Number(slider.value) + 1); draw(); } }, "▶");
  const scale = h("select", { "data-control": "guidance", "aria-label": say(WORDS, "scale"), onchange: () => draw() });
  const typed = h("input", { type: "number", min: 0, max: 20, step: 0.5, value: 2, style: "width:4em", "aria-label": say(WORDS, "typed") });
  const live = kernelRow(model, say(WORDS, "another"), { [say(WORDS, "scaleInput")]: typed }, () => ({ guidance: Number(typed.value) }));
  const label = h("div", { class: "lk-label", "data-role": "label" });
  const grid = h("div", { class: "lk-grid" });
  const caption = h("div", { class: "lk-cap" }, say(WORDS, "caption"));
  root.append(h("div", { class: "lk-controls" }, back, h("label", {}, `${say(WORDS, "slider")} `, slider), next,
              labelled(say(WORDS, "guidance"), scale)), live, label, grid, caption);

  let alts = [], canvases = [], captions = [], names = [], previewCell = null, cache = new Map(), images = new Map();

  function setup() {
    const data = modelData(model);
    const keys = Object.keys(data.scales || {});
    scale.replaceChildren(...keys.map((k) => h("option", { value: k }, k)));
    const start = data.start || {};
    scale.value = keys.includes(start.guidance) ? start.guidance : keys[0];
    const frames = data.scales[scale.value];
    slider.max = String(frames.length - 1);
    slider.value = String(start.step ?? frames.length - 1);
    const size = data.size;
    grid.replaceChildren();
    canvases = []; captions = []; names = []; alts = []; cache = new Map(); images = new Map();
    root.querySelector(".lk-alts").replaceChildren();
    data.channels.forEach((name, c) => {
      const canvas = h("canvas", { width: size, height: size, "data-channel": c });
      alts.push(describe(root, canvas, say(WORDS, "channelAlt", { name })));
      const cap = h("div", { class: "lk-cap" });
      const head = h("div", { class: "lk-cap" }, h("b", {}, say(WORDS, "channel", { name })));
      canvases.push(canvas); captions.push(cap); names.push(head);
      grid.append(h("div", { class: "lk-channel", style: `grid-column:${c % 2 + 1}; grid-row:${Math.floor(c / 2) + 1}` }, head, canvas, cap));
    });
    previewCell = h("div", { class: "lk-previewcell" });
    grid.append(previewCell);
    for (const [key, list] of Object.entries(data.scales)) {
      list.forEach((f, i) => {
        const img = h("img", { class: "lk-preview", alt: say(WORDS, "preview", { what: pick(f.preview_of) }), src: jpegUri(f.preview) });
        images.set(`${key}/${i}`, img);
      });
    }
    draw();
  }

  function pixels(key, index, frameData, size) {
    const id = `${key}/${index}`;
    if (!cache.has(id)) {
      cache.set(id, frameData.latent.map((b64) => {
        const codes = decode(b64), image = new ImageData(size, size);
        for (let i = 0; i < codes.length; i++) image.data.set(COLOURS.subarray(codes[i] * 4, codes[i] * 4 + 4), i * 4);
        return image;
      }));
    }
    return cache.get(id);
  }

  function draw() {
    const data = modelData(model);
    const frames = data.scales[scale.value];
    if (!frames) { painted(root); return; }
    slider.max = String(frames.length - 1);
    const index = Math.max(0, Math.min(frames.length - 1, Number(slider.value)));
    slider.value = String(index);
    back.disabled = index === 0;
    next.disabled = index === frames.length - 1;
    const f = frames[index];
    label.textContent = say(WORDS, "label", { index, last: frames.length - 1, name: f.name, scale: scale.value, what: pick(f.preview_of) });
    const images_ = pixels(scale.value, index, f, data.size);
    canvases.forEach((canvas, c) => {
      canvas.getContext("2d").putImageData(images_[c], 0, 0);
      canvas.dataset.state = `${scale.value}/${index}`;
      const [mean, std, lo, hi] = f.stats[c];
      captions[c].textContent = say(WORDS, "stats", { mean: fmt(mean, 4), std: fmt(std, 4), lo: fmt(lo, 4), hi: fmt(hi, 4) });
      alts[c].textContent = `${f.name}: ${captions[c].textContent}`;
    });
    const cell = previewCell;
    cell.replaceChildren(h("div", { class: "lk-cap" }, h("b", {}, say(WORDS, "previewOf", { name: f.name }))), images.get(`${scale.value}/${index}`),
                                h("div", { class: "lk-cap" }, pick(f.preview_of)));
    painted(root, say(WORDS, "status", { index, last: frames.length - 1, name: f.name, scale: scale.value }));
  }

  return start(model, root, setup);
}

export default { render };
