// mystmd plugin of the static book: a link to a page's MyST source goes to the page.
//
// Pages link to each other as `07-traces/01-trace-record.md` (and to glossary entries as
// `glossary.md#term-trace`): that is the file a reader opens in JupyterLab, where the .md
// is the notebook.  The static book's pages are the paired .ipynb files (they hold the
// stored outputs), so mystmd would treat `page.md` as a file to download.  Before mystmd
// resolves links, this rewrites a relative link to `X.md[#anchor]` into `X.ipynb[#anchor]`
// when `X.ipynb` exists beside `X.md`; every other link is left alone.  A glossary anchor
// is written as the entry's HTML id (`#term-kv-cache`, what a browser can address); mystmd
// resolves references by the term's label (`term-kv cache`), so the anchor is mapped back
// to the label of the term in that page's {glossary} block.
// `make book-check` fails if a link to a page still ends up as a download.
import fs from 'node:fs';
import path from 'node:path';

const EXTERNAL = /^([a-z][a-z0-9+.-]*:|\/|#)/i;

const glossaries = new Map();

export function htmlId(term) {
  return 'term-' + term.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

function glossaryLabels(file) {
  if (!glossaries.has(file)) {
    const labels = new Map();
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const block = text.match(/```\{glossary\}\n([\s\S]*?)\n```/);
    for (const line of block ? block[1].split('\n') : []) {
      if (!line.trim() || line.startsWith(':') || line.startsWith(' ')) continue;
      const term = line.trim();
      labels.set(htmlId(term), 'term-' + term.toLowerCase().replace(/\s+/g, ' '));
    }
    glossaries.set(file, labels);
  }
  return glossaries.get(file);
}

export function pageLink(url, fromFile) {
  if (typeof url !== 'string' || EXTERNAL.test(url)) return url;
  const cut = url.search(/[?#]/);
  const base = cut < 0 ? url : url.slice(0, cut);
  const rest = cut < 0 ? '' : url.slice(cut);
  if (!base.endsWith('.md')) return url;
  const ipynb = base.slice(0, -'.md'.length) + '.ipynb';
  if (fromFile && !fs.existsSync(path.resolve(path.dirname(fromFile), ipynb))) return url;
  if (fromFile && rest.startsWith('#term-')) {
    const label = glossaryLabels(path.resolve(path.dirname(fromFile), base)).get(rest.slice(1));
    if (label) return ipynb + '#' + label;
  }
  return ipynb + rest;
}

function walk(node, fromFile) {
  if (!node || typeof node !== 'object') return;
  if (node.type === 'link' && node.url) node.url = pageLink(node.url, fromFile);
  if (Array.isArray(node.children)) for (const child of node.children) walk(child, fromFile);
}

const mdPageLinks = {
  name: 'links to a page .md go to its .ipynb',
  stage: 'document',
  plugin: () => (tree, vfile) => walk(tree, vfile && vfile.path),
};

export default { name: 'Inside One Generation: page links', transforms: [mdPageLinks] };
