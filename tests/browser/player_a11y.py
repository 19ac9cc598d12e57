"""What a screen reader and a reader with low vision get from a player, measured in the page.

``JS_CANVAS_INK`` (an init script) records, for every ``fillText`` on a canvas, the text's
colour and the colour of the last rectangle filled before it (the cell the text is written in).
``JS_A11Y`` reads the player's accessible name, its live regions and each drawing's name and
description; ``JS_CONTRAST`` computes the WCAG contrast of every text against what is drawn
under it (an HTML text against its nearest painted background, an SVG text against the topmost
shape under its centre, a canvas text against its cell), opacity included.
"""

from __future__ import annotations

JS_CANVAS_INK = """(() => {
  const P = CanvasRenderingContext2D.prototype, rect = P.fillRect, text = P.fillText, under = new WeakMap();
  const ink = window.canvasInk = new WeakMap();
  P.fillRect = function (...args) { under.set(this, this.fillStyle); return rect.apply(this, args); };
  P.fillText = function (t, ...args) {
    if (String(t).trim()) {
      let seen = ink.get(this.canvas);
      if (!seen) ink.set(this.canvas, seen = new Map());
      seen.set(`${this.fillStyle}|${under.get(this) || '#ffffff'}`, String(t));
    }
    return text.call(this, t, ...args);
  };
})();"""

JS_A11Y = """() => {
  const root = window.playerEl.querySelector('.lk-player'), tree = root.getRootNode();
  const byId = (id) => (tree.getElementById ? tree.getElementById(id) : document.getElementById(id));
  const refs = (el, attr) => (el.getAttribute(attr) || '').split(/\\s+/).filter(Boolean)
    .map((id) => (byId(id) || {}).textContent || '').join(' ').trim();
  const nameOf = (el) => refs(el, 'aria-labelledby') || (el.getAttribute('aria-label') || '').trim();
  const charts = Array.from(root.querySelectorAll('svg, canvas'))
    .filter((c) => !c.closest('[aria-hidden=true]') && !c.parentElement.closest('svg'))
    .map((c) => ({what: c.dataset.role || c.tagName.toLowerCase(), role: c.getAttribute('role') || '',
                  name: nameOf(c), description: refs(c, 'aria-describedby')}));
  const live = Array.from(root.querySelectorAll('[aria-live]'))
    .map((n) => [n.getAttribute('aria-live'), n.textContent.trim()]);
  const title = root.querySelector('.lk-title').textContent.trim();
  return {role: root.getAttribute('role'), name: nameOf(root), title, player: root.dataset.player, charts, live};
}"""

#: the values of the player's sliders and pickers: which ones a key moved
JS_VALUES = """() => Object.fromEntries(Array.from(
  window.playerEl.querySelectorAll('input[type=range][data-control], select[data-control]'))
  .map((c) => [c.dataset.control, c.value]))"""

JS_CONTRAST = """() => {
  const root = window.playerEl.querySelector('.lk-player');
  const parse = (text) => {
    if (!text || text === 'none' || text.startsWith('url')) return null;
    const hex = text.match(/^#([0-9a-f]{6})$/i);
    if (hex) return [0, 2, 4].map((i) => parseInt(hex[1].slice(i, i + 2), 16)).concat(1);
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const v = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  };
  const over = (top, below) => top.slice(0, 3).map((c, i) => c * top[3] + below[i] * (1 - top[3])).concat(1);
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const opacity = (el) => {
    let o = 1;
    for (let n = el; n && n !== root.parentNode; n = n.parentElement) o *= Number(getComputedStyle(n).opacity);
    return o;
  };
  const htmlBackground = (el) => {
    const layers = [];
    for (let n = el; n; n = n.parentElement) {
      const c = parse(getComputedStyle(n).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    return layers.reverse().reduce((below, top) => over(top, below), [255, 255, 255, 1]);
  };
  const svgBackground = (text) => {
    const svg = text.ownerSVGElement, box = text.getBBox();
    const centre = new DOMPoint(box.x + box.width / 2, box.y + box.height / 2).matrixTransform(text.getCTM());
    let bg = htmlBackground(svg);
    for (const shape of svg.querySelectorAll('rect, circle, ellipse, path, polygon')) {
      // a shape after the text is painted above it
      if (!(shape.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
      const style = getComputedStyle(shape), fill = parse(style.fill);
      if (!fill || style.visibility === 'hidden' || shape.closest('defs, pattern')) continue;
      const point = centre.matrixTransform(shape.getCTM().inverse());
      const alpha = fill[3] * Number(style.fillOpacity) * opacity(shape);
      if (shape.isPointInFill(point)) bg = over([...fill.slice(0, 3), alpha], bg);
    }
    return bg;
  };
  const found = [];
  for (const node of root.querySelectorAll('*')) {
    if (!Array.from(node.childNodes).some((c) => c.nodeType === 3 && c.textContent.trim())) continue;
    if (node.closest('select, style, title, .lk-sr, button[disabled]')) continue;
    const style = getComputedStyle(node);
    if (style.visibility === 'hidden' || !node.getClientRects().length) continue;
    const inSvg = node instanceof SVGElement;
    const fg = parse(inSvg ? style.fill : style.color);
    if (!fg) continue;
    const bg = inSvg ? svgBackground(node) : htmlBackground(node);
    const r = ratio(over([...fg.slice(0, 3), fg[3] * opacity(node) * (inSvg ? Number(style.fillOpacity) : 1)], bg), bg);
    found.push([node.textContent.trim().slice(0, 30), Math.round(r * 100) / 100]);
  }
  for (const canvas of root.querySelectorAll('canvas')) {
    for (const [pair, sample] of (window.canvasInk && window.canvasInk.get(canvas)) || []) {
      const [fg, bg] = pair.split('|').map(parse);
      const r = fg && bg ? Math.round(ratio(over(fg, bg), bg) * 100) / 100 : null;
      if (r !== null) found.push([`canvas ${canvas.dataset.role || ''} ${sample}`, r]);
    }
  }
  return found;
}"""
