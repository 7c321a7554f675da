/**
 * HTML to blocks: the main text only. Scripts, styles, navigation, headers, footers and asides go;
 * a source's `selectors` choose the content root, the title, and what to exclude. Headings keep
 * their levels, preformatted text stays as written, table rows become one block each.
 */
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import type { Block, ParsedDocument } from '../document.js';

export interface Selectors {
  content?: string;
  title?: string;
  exclude?: string;
}

const DROP = 'script, style, noscript, template, svg, canvas, iframe, object, nav, header, footer, aside, form, button, select';
const BLOCK = new Set(['p', 'div', 'section', 'article', 'main', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'blockquote', 'figure', 'figcaption', 'caption', 'table', 'thead', 'tbody', 'tfoot', 'address', 'details', 'summary', 'hr', 'br', 'body', 'html']);

export function parseHtml(html: string, selectors: Selectors = {}): ParsedDocument {
  const $ = cheerio.load(html);
  const title = (selectors.title ? $(selectors.title).first().text() : $('title').first().text()).replace(/\s+/g, ' ').trim() || null;
  $(DROP).remove();
  if (selectors.exclude) $(selectors.exclude).remove();
  const roots = selectors.content ? $(selectors.content) : $('main').length > 0 ? $('main') : $('body').length > 0 ? $('body') : $.root();
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
      const t = $(el).text().replace(/\s+/g, ' ').trim();
      if (t !== '') blocks.push({ kind: 'heading', level: Number(heading[1]), text: t });
      return;
    }
    if (name === 'pre') {
      flush();
      const t = $(el).text().replace(/\s+$/, '');
      if (t.trim() !== '') blocks.push({ kind: 'code', text: t });
      return;
    }
    if (name === 'tr') {
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
