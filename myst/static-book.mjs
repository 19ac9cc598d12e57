// mystmd plugin of the static book: what a page of the site holds, after mystmd has resolved
// the page (its citations collected, its references and links resolved).
//
// A citation links to the page's own reference list.  The book theme renders a page's
// References section from the keys the page cites, one `<li id="cite-KEY">` each, but draws
// a citation as a link to the paper's DOI or URL (off-site).  This rewrites each citation
// into a link to `PAGE#cite-KEY` with the same text, and each citation group into a span with
// the theme's citation-group classes (they add the brackets and the separators).  The link
// names the page (`/dpo#cite-...`): the theme prefixes every internal link with the site's
// base URL.  The References section is unchanged: mystmd built it before this runs.
//
// A player cell's kernel widget is not in the site.  A widget cell tagged `remove-output` is
// followed by its player's {anywidget} directive; its stored output is the kernel widget's
// view, which the static book cannot draw (the theme would put a "kernel connection is
// required" note in the page, hidden).  Its widget-view outputs are dropped; a widget output
// that is shown stays, and tests/test_site.py fails on it.
import fs from 'node:fs';
import path from 'node:path';

export const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';

// mystmd's slug of a page file (myst-cli's createSlug): the name without its leading
// enumeration, lower case, each run of other characters one `-`, at most 50 characters.
export function pageSlug(file) {
  let name = path.basename(file).replace(/\.[^.]*$/, '');
  if (!/^[12][0-9]{3}/.test(name) && !/^[0-9]{5}/.test(name)) name = name.replace(/^[0-9_.-]+/, '') || name;
  name = name.toLowerCase().replace(/&/g, '-and-');
  return name.replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '').slice(0, 50);
}

// The book's first toc entry is its index page, served at `/`.
function indexFile(root) {
  const config = path.join(root, 'myst.yml');
  const text = fs.existsSync(config) ? fs.readFileSync(config, 'utf8') : '';
  const first = text.match(/^\s*-\s*file:\s*(\S+)/m);
  return first ? path.resolve(root, first[1]) : null;
}

export function pageUrl(file, root = process.cwd()) {
  return path.resolve(root, file) === indexFile(root) ? '/' : `/${pageSlug(file)}`;
}

function citationLink(cite, url) {
  return { type: 'link', url: `${url}#cite-${cite.label}`, children: cite.children, data: { cite: cite.label } };
}

// A citation mystmd could not resolve stays as it is: mystmd reports it (after this runs) and
// the theme marks it "Citation Not Found"; so does the whole group it is in.
const unresolved = (node) => node.type === 'cite' && node.error;

export function linkCitations(node, url) {
  if (!node || !Array.isArray(node.children)) return;
  node.children = node.children.map((child) => {
    if (child.type === 'cite' && !child.error) return citationLink(child, url);
    if (child.type !== 'citeGroup' || child.children.some(unresolved)) return child;
    const kind = child.kind === 'narrative' ? 'narrative' : 'parenthetical';
    const links = child.children.map((cite) => (cite.type === 'cite' ? citationLink(cite, url) : cite));
    return { type: 'span', class: `cite-group ${kind}`, children: links };
  });
  for (const child of node.children) linkCitations(child, url);
}

function isWidgetView(output) {
  const data = output.type === 'output' && output.jupyter_data && output.jupyter_data.data;
  return Boolean(data && WIDGET_VIEW in data);
}

export function dropRemovedWidgets(node) {
  if (!node || !Array.isArray(node.children)) return;
  if (node.type === 'outputs' && node.visibility === 'remove') {
    node.children = node.children.filter((output) => !isWidgetView(output));
  }
  for (const child of node.children) dropRemovedWidgets(child);
}

const staticBook = {
  name: 'citations link to the page reference list; removed widget views are dropped',
  stage: 'project',
  plugin: () => (tree, vfile) => {
    linkCitations(tree, pageUrl(vfile.path));
    dropRemovedWidgets(tree);
  },
};

export default { name: 'Inside One Generation: the static book', transforms: [staticBook] };
