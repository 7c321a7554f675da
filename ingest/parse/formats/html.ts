/**
 * HTML to blocks: the page's main content only. A source's `selectors` choose the content root,
 * the title, and what to exclude; without them the root is the page's main region (see
 * main-content.ts), and the chrome inside it goes: navigation, sidebars, tables of contents,
 * breadcrumbs, footers, "previous / next", cookie banners, headings' permalink anchors, code line
 * numbers. Headings keep their levels, preformatted text stays as written, table rows become one
 * block each.
 */
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import type { Block, ParsedDocument } from '../document.js';
import { contentRoots, dropChrome, headingText } from './main-content.js';

export interface Selectors {
  content?: string;
  title?: string;
  exclude?: string;
}

/** Never text: code, media, and the parts of a page a reader does not read. */
const DROP = 'script, style, noscript, template, svg, canvas, iframe, object, embed, form, button, select, input, textarea, dialog, link, meta';
const BLOCK = new Set(['p', 'div', 'section', 'article', 'main', 'header', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'blockquote', 'figure', 'figcaption', 'caption', 'table', 'thead', 'tbody', 'tfoot', 'address', 'details', 'summary', 'hr', 'br', 'body', 'html']);

export function parseHtml(html: string, selectors: Selectors = {}): ParsedDocument {
  const $ = cheerio.load(html);
  const title = (selectors.title ? $(selectors.title).first().text() : $('title').first().text()).replace(/\s+/g, ' ').trim() || null;
  $(DROP).remove();
  if (selectors.exclude) $(selectors.exclude).remove();
  const roots = selectors.content ? $(selectors.content) : contentRoots($);
  dropChrome($, roots);
  const blocks: Block[] = [];
  const state = { text: '' };
  const flush = () => {
    const t = state.text.replace(/[ \t\r\n]+/g, ' ').trim();
    if (t !== '') blocks.push({ kind: 'paragraph', text: t });
    state.text = '';
  };
  const walk = (node: AnyNode) => {
    if (node.type === 'text') {
      state.text += (node as unknown as { data: string }).data;
      return;
    }
    if (node.type !== 'tag') return;
    const el = node as Element;
    const name = el.name.toLowerCase();
    const heading = /^h([1-6])$/.exec(name);
    if (heading) {
      flush();
      const t = headingText($(el).text());
      if (t !== '') blocks.push({ kind: 'heading', level: Number(heading[1]), text: t });
      return;
    }
    if (name === 'pre') {
      flush();
      const t = $(el).text().replace(/\s+$/, '');
      if (t.trim() !== '') blocks.push({ kind: 'code', text: t });
      return;
    }
    // A row is one block, but for one that holds code (a highlighted block's table): its lines stay.
    if (name === 'tr' && $(el).find('pre').length === 0) {
      flush();
      const cells = $(el).children('td, th').map((_, c) => $(c).text().replace(/\s+/g, ' ').trim()).get().filter((c) => c !== '');
      if (cells.length > 0) blocks.push({ kind: 'paragraph', text: cells.join(' | ') });
      return;
    }
    const isBlock = BLOCK.has(name);
    if (isBlock) flush();
    for (const child of el.children) walk(child);
    if (isBlock) flush();
  };
  roots.each((_, root) => {
    for (const child of root.type === 'root' ? (root as unknown as { children: AnyNode[] }).children : [root]) walk(child);
  });
  flush();
  return { title, blocks };
}
