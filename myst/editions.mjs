// mystmd plugin of the static book: each page links to the same page in the other edition.
//
// The book has two editions, each a MyST project of its own: the English one (../myst.yml) and
// the Chinese one (zh/myst.yml, marked by zh/.labkit-edition).  `python -m booktools build
// --site` publishes the English site at BASE_URL and the Chinese one at BASE_URL/zh, with the
// same page slugs (the same file names).  This adds, at the top of every page, a link to its
// counterpart: "中文" on an English page (to the zh edition's front page while a page has no
// translation), "English" on a Chinese page.  The link carries the full path with the base URL
// and is not `internal`: the other edition is another site, which the theme's client-side
// navigation cannot load.  A LaTeX/PDF export (English only) gets no such link.
import fs from 'node:fs';
import path from 'node:path';
import { pageSlug } from './static-book.mjs';

export const MARKER = '.labkit-edition';
export const EDITION_LINK = 'labkit-edition-link';

// The edition of the project at `root`: the one line of its marker, else English.
export function editionOf(root) {
  const marker = path.join(root, MARKER);
  return fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').trim() : 'en';
}

function isIndex(root, file) {
  const config = path.join(root, 'myst.yml');
  const text = fs.existsSync(config) ? fs.readFileSync(config, 'utf8') : '';
  const first = text.match(/^\s*-\s*file:\s*(\S+)/m);
  return Boolean(first) && path.resolve(root, first[1]) === path.resolve(root, file);
}

// The counterpart of page `file` of the project at `root`, published with base URL `base`:
// { url, label } (the other edition's site is base + '/zh', or base without its '/zh').
export function counterpart(file, root, base = '') {
  const site = base.replace(/\/+$/, '');
  const lang = editionOf(root);
  const relative = path.relative(root, path.resolve(root, file));
  const slug = isIndex(root, file) ? '' : pageSlug(file);
  if (lang === 'en') {
    const translated = fs.existsSync(path.join(root, 'zh', relative));
    return { url: `${site}/zh/${translated ? slug : ''}`, label: '中文', lang: 'zh' };
  }
  return { url: `${site.replace(/\/[a-z]{2}$/, '')}/${slug}`, label: 'English', lang: 'en' };
}

export function linkNode({ url, label, lang }) {
  const link = { type: 'link', url, internal: false, class: EDITION_LINK, data: { edition: lang }, children: [{ type: 'text', value: label }] };
  return { type: 'block', class: EDITION_LINK, children: [{ type: 'paragraph', children: [link] }] };
}

const exporting = () => process.argv.some((arg) => ['--tex', '--pdf', '--typst', '--docx'].includes(arg));

const editionLinks = {
  name: 'each page links to its counterpart in the other edition',
  stage: 'project',
  plugin: () => (tree, vfile) => {
    if (exporting() || !vfile.path || !Array.isArray(tree.children)) return;
    tree.children.unshift(linkNode(counterpart(vfile.path, process.cwd(), process.env.BASE_URL || '')));
  },
};

export default { name: 'Inside One Generation: the two editions', transforms: [editionLinks] };
