// One page of the static book as a standalone HTML page, for the browser suite's axe check
// (tests/browser/test_browser_axe.py).  The book theme (myst-theme's book-theme) cannot be
// fetched offline, so `myst build --html` cannot run here; this renders the content JSON that
// `myst build --site` writes (booktools.book.site_content) the way the theme shows it:
//
// - the title (frontmatter) as <title> and the only <h1>, the page inside <main><article>,
//   <html lang="en">, the site's stylesheet (/site.css, myst/site.css) and KaTeX's stylesheet at
//   the theme's CDN address (the test rewrites it to the site's copy with booktools.assets,
//   as the build does);
// - prose with myst-to-html's mystToHast, its handlers replaced where the theme differs:
//   math is the KaTeX HTML mystmd rendered (the theme's server rendering; KaTeX from npm when a
//   node has none), display math in the theme's flex box with its "(n)" equation link (mystmd's
//   numbers: myst-to-html's own numbering is undone);
//   <details> keep their content; a citation group is a <span> with the theme's classes;
// - a code cell as the theme's CodeBlock: a body that becomes a focusable region named "code
//   block content" only when it scrolls (the theme's useIsScrollable), hidden when removed,
//   in a "Source" <details> when hidden;
// - outputs in the theme's outputs container (its markup and classes: it scrolls sideways and is
//   not focusable, which is the theme's),
//   each output as the theme draws it: when every mime type is one the theme draws itself
//   (image/png|jpeg|gif|bmp, text/plain) an image is an <img> whose alt is the output's
//   text/plain (the theme's rule) and text alone a <div> of pre-wrapped text; otherwise as
//   JupyterLab's renderers would: text/html as its HTML, else text/markdown as raw text (the
//   theme shows it unrendered), else the image, else text/plain in a <pre>; a stream in a <pre>;
// - a player (an `anywidget` node): its bundle from the site, loaded as the theme loads it (the
//   module's render({ model, el }) into an element inside an open shadow root, the model the
//   directive's JSON body); when the bundle is not in the site, a placeholder region named by
//   the player's name (from the bundle's file name: the player's own title is drawn by its code).
//
// What differs from the real theme: no navigation, table of contents, header, footer, search,
// launch or download buttons, no "copy" button or heading "#" links, no syntax colouring (code
// is plain text), no frontmatter block (authors, licence, subtitle), no dark mode, an HTML
// output is not passed through JupyterLab's sanitizer, and the theme's Tailwind classes are
// approximated by the few rules in THEME_CSS (its preflight's images no wider than the column,
// a 725 px column).
// Those parts are the theme's, not the book's: the axe check covers what the book puts in a page.
//
// Usage: node render-page.mjs OUT_DIR PUBLIC_DIR CONTENT.json...  writes OUT_DIR/<name>.html
// for each CONTENT.json named <name>.json (mystmd names it by the page's slug, the
// index page index.json); PUBLIC_DIR is the site's public folder (where the players' bundles are).
import fs from 'node:fs';
import path from 'node:path';
import { mystToHtml } from 'myst-to-html';
import { u } from 'unist-builder';
import { all } from 'mdast-util-to-hast';
import katex from 'katex';

export const KATEX_CSS = 'https://cdn.jsdelivr.net/npm/katex@0.15.2/dist/katex.min.css';
const SAFE_MIME = new Set(['text/plain', 'image/png', 'image/jpeg', 'image/gif', 'image/bmp']);
const IMAGE_MIME = ['image/png', 'image/jpeg', 'image/gif', 'image/bmp'];
const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';

// The theme's Tailwind classes this page uses, approximated; its prose is black on white.
export const THEME_CSS = `
body { margin: 0; color: #111827; background: #fff; font-size: 16px; line-height: 1.6; }
main { display: block; }
img, svg, video { display: block; max-width: 100%; height: auto; }
article { max-width: 725px; margin: 0 auto; padding: 1rem; box-sizing: border-box; }
pre { white-space: pre; }
.hidden { display: none; }
.myst-code { position: relative; margin: 1.25rem 0; font-size: 0.875rem; }
.myst-code.executable { border: 1px solid #e5e7eb; border-left: 4px solid #60a5fa; }
.myst-code-body { display: block; overflow: auto; padding: 0.75rem; }
.myst-code-body pre { margin: 0; }
.max-w-full { max-width: 100%; }
.overflow-x-auto { overflow-x: auto; }
.overflow-y-visible { overflow-y: visible; }
.relative { position: relative; }
.m-0 { margin: 0; }
.mb-5 { margin-bottom: 1.25rem; }
.font-mono { font-family: monospace; }
.text-sm { font-size: 0.875rem; }
.whitespace-pre-wrap { white-space: pre-wrap; }
.math-display { display: flex; margin: 1.25rem 0; }
.math-display > .math-body { flex-grow: 1; overflow-x: auto; overflow-y: hidden; }
.math-display > .math-number { align-self: center; flex: none; padding-left: 0.5rem; }
.player-placeholder { border: 1px dashed #6b7280; padding: 1rem; }
`;

const escape = (text) =>
  String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const raw = (value) => u('raw', value);
const text = (value) => (Array.isArray(value) ? value.join('') : String(value ?? ''));

function mathHtml(node, displayMode) {
  if (node.html) return node.html;
  return katex.renderToString(node.value || '', { displayMode, throwOnError: false });
}

function math(h, node) {
  const id = node.html_id || node.identifier || undefined;
  const parts = [h(node, 'div', { class: 'math-body' }, [raw(mathHtml(node, true))])];
  if (node.mystEnumerator) {
    const number = `(${node.mystEnumerator})`;
    const link = h(node, 'a', { href: `#${id}`, title: 'Link to this Equation' }, [u('text', number)]);
    parts.push(h(node, 'div', { class: 'math-number' }, [link]));
  }
  return h(node, 'div', { id, class: 'math-display' }, parts);
}

const inlineMath = (h, node) => h(node, 'span', [raw(mathHtml(node, false))]);

function code(h, node) {
  const body = h(node, 'div', { class: 'myst-code-body', 'aria-label': 'code block content' }, [
    h(node, 'pre', [h(node, 'code', [u('text', node.value || '')])]),
  ]);
  const classes = ['myst-code', node.executable ? 'executable' : '', node.visibility === 'remove' ? 'hidden' : ''];
  const block = h(node, 'div', { id: node.html_id || undefined, class: classes.filter(Boolean).join(' ') }, [body]);
  return node.visibility === 'hide' ? dropdown(h, node, 'Source', [block]) : block;
}

function dropdown(h, node, title, children) {
  return h(node, 'details', [h(node, 'summary', [u('text', title)]), h(node, 'div', children)]);
}

function outputHtml(data) {
  const mimes = Object.keys(data).filter((m) => m !== WIDGET_VIEW);
  const plain = data['text/plain'] ? text(data['text/plain'].content) : null;
  const image = IMAGE_MIME.find((m) => data[m]);
  const img = () => `<img src="${escape(data[image].path)}" alt="${escape(plain ?? 'Image produced in Jupyter')}">`;
  if (mimes.every((m) => SAFE_MIME.has(m))) {
    if (image) return img();
    return plain === null ? '' : `<div class="font-mono text-sm whitespace-pre-wrap">${escape(plain)}</div>`;
  }
  if (data['text/html']) return `<div class="output-html">${text(data['text/html'].content)}</div>`;
  if (data['text/markdown']) return `<pre>${escape(text(data['text/markdown'].content))}</pre>`;
  if (image) return img();
  return plain === null ? '' : `<pre>${escape(plain)}</pre>`;
}

function output(h, node) {
  const out = node.jupyter_data || {};
  if (out.output_type === 'stream') {
    return h(node, 'div', [raw(`<pre class="text-sm font-thin font-system">${escape(text(out.text))}</pre>`)]);
  }
  if (out.output_type === 'error') {
    return h(node, 'div', [raw(`<pre>${escape((out.traceback || []).join('\n').replace(/\x1b\[[0-9;]*m/g, ''))}</pre>`)]);
  }
  return h(node, 'div', [raw(outputHtml(out.data || {}))]);
}

function outputs(h, node) {
  const theme = 'max-w-full overflow-y-visible overflow-x-auto m-0 group relative';
  const classes = [theme, node.children?.length ? 'mb-5' : '', node.visibility === 'remove' ? 'hidden' : ''];
  const attrs = { 'data-name': 'outputs-container', id: node.identifier || undefined };
  const box = h(node, 'div', { ...attrs, class: classes.filter(Boolean).join(' ') }, all(h, node));
  return node.visibility === 'hide' ? dropdown(h, node, 'Output', [box]) : box;
}

function anywidget(h, node, pub) {
  const file = path.basename(node.esm || '');
  const player = file.replace(/\.mjs$/, '').split('.').pop() || 'player';
  if (!pub || !file || !fs.existsSync(path.join(pub, file))) {
    return h(node, 'div', { role: 'region', 'aria-label': `${player} player`, class: 'player-placeholder' }, [
      u('text', `The ${player} player (its bundle is not built).`),
    ]);
  }
  return h(node, 'div', { class: 'anywidget', 'data-esm': `/${file}`, 'data-model': JSON.stringify(node.model || {}) });
}

function details(h, node) {
  const [summary, ...rest] = node.children || [];
  if (!summary || summary.type !== 'summary') return h(node, 'details', all(h, node));
  const content = h(node, 'div', all(h, { type: 'div', children: rest }));
  return h(node, 'details', [h(summary, 'summary', all(h, summary)), content]);
}

function crossReference(h, node) {
  const hash = node.html_id || node.identifier;
  const href = node.remote && node.url ? `${node.url}#${hash}` : `#${hash}`;
  return h(node, 'a', { href, title: node.title || undefined }, all(h, node));
}

const span = (h, node) => h(node, 'span', { class: node.class || undefined }, all(h, node));
const block = (h, node) => h(node, 'div', { id: node.html_id || undefined }, all(h, node));
const glossary = (h, node) => h(node, 'div', { class: 'glossary' }, all(h, node));

export function handlers(pub) {
  return {
    math, inlineMath, code, output, outputs, details, crossReference, span, block, glossary,
    anywidget: (h, node) => anywidget(h, node, pub),
  };
}

// The players, loaded as the theme loads an {anywidget} node: the module from the site, the
// model the directive's JSON body behind anywidget's get/set/on/off/save_changes, render() into
// an element inside an open shadow root.  window.playersDone is set when every one has drawn
// (or failed: window.playerErrors).
const PLAYER_SCRIPT = `
class Model {
  #state; #target = new EventTarget();
  constructor(state) { this.#state = state; }
  get(name) { return this.#state[name]; }
  set(name, value) { this.#state[name] = value;
    this.#target.dispatchEvent(new CustomEvent('change:' + name, { detail: value }));
    this.#target.dispatchEvent(new CustomEvent('change', { detail: value })); }
  on(name, callback) { this.#target.addEventListener(name, callback); }
  off(name, callback) { this.#target.removeEventListener(name, callback); }
  save_changes() {}
  send() {}
}
window.playerErrors = [];
for (const host of document.querySelectorAll('.anywidget[data-esm]')) {
  try {
    const widget = (await import(host.dataset.esm)).default;
    const el = document.createElement('div');
    host.attachShadow({ mode: 'open' }).append(el);
    const model = new Model(JSON.parse(host.dataset.model));
    if (widget.initialize) await widget.initialize({ model });
    await widget.render({ model, el });
  } catch (error) {
    window.playerErrors.push(host.dataset.esm + ': ' + String(error && error.stack || error));
  }
}
// the theme's code blocks: a body that scrolls is a focusable region (useIsScrollable)
for (const body of document.querySelectorAll('.myst-code-body')) {
  if (body.scrollWidth > body.clientWidth || body.scrollHeight > body.clientHeight) {
    body.tabIndex = 0;
    body.setAttribute('role', 'region');
  }
}
window.playersDone = true;
`;

// myst-to-html numbers the equations again, its own way: the theme shows mystmd's numbers.
function keepNumbers(node) {
  if (!node || typeof node !== 'object') return;
  if (node.type === 'math') node.mystEnumerator = node.enumerator;
  for (const child of node.children || []) keepNumbers(child);
}

export function renderPage(content, pub) {
  const title = (content.frontmatter && content.frontmatter.title) || content.slug;
  const tree = structuredClone(content.mdast);
  keepNumbers(tree);
  const body = mystToHtml(tree, {
    hast: { allowDangerousHtml: true, handlers: handlers(pub) },
    formatHtml: false,
    stringifyHtml: { allowDangerousHtml: true },
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escape(title)}</title>
<link rel="stylesheet" href="${KATEX_CSS}">
<style>${THEME_CSS}</style>
<link rel="stylesheet" href="/site.css">
</head>
<body>
<main><article>
<h1>${escape(title)}</h1>
${body}
</article></main>
<script type="module">${PLAYER_SCRIPT}</script>
</body>
</html>
`;
}

function main(argv) {
  const [out, pub, ...pages] = argv;
  if (!out || !pub || pages.length === 0) {
    process.stderr.write('usage: node render-page.mjs OUT_DIR PUBLIC_DIR CONTENT.json...\n');
    return 2;
  }
  fs.mkdirSync(out, { recursive: true });
  for (const page of pages) {
    let content;
    try {
      content = JSON.parse(fs.readFileSync(page, 'utf8'));
    } catch (error) {
      process.stderr.write(`render-page: CONTENT.json ${page}: ${error.message}\n`);
      return 2;
    }
    if (!content || typeof content !== 'object' || !content.mdast) {
      process.stderr.write(`render-page: CONTENT.json ${page} is not a page's content JSON (no mdast)\n`);
      return 2;
    }
    const name = path.basename(page, '.json');
    fs.writeFileSync(path.join(out, `${name}.html`), renderPage(content, pub));
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
