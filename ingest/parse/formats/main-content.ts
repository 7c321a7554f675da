/**
 * What of an HTML page is its content, generic over the generators documentation is published
 * with (Sphinx and its themes, MkDocs, Docusaurus, Hugo, Javadoc, Doxygen, GitHub and Confluence
 * exports) rather than a rule per generator:
 * - the root is the page's main region (`role="main"`, `<main>`, `itemprop="articleBody"`, the
 *   ids Doxygen and Confluence use), narrowed to its one `<article>`; else the body;
 * - inside it, chrome goes by its semantics (nav, aside, footer; navigation, banner, search and
 *   contentinfo roles; hidden elements), by the words of its class and id (sidebar, toc,
 *   breadcrumb, pagination, footer, cookie, ...), and by its shape (lists of three or more links
 *   into the same site that are nearly all link text: tables of contents, "previous / next");
 * - permalink anchors go (links of nothing but ¶, §, #, 🔗), and code's line numbers.
 */
import type { CheerioAPI, Cheerio } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';

/** Main regions, most specific first. */
const MAIN = ['[role="main"]', 'main', '[itemprop="articleBody"]', '#main-content', '#doc-content', '#content'];

/** Elements that are chrome wherever they stand inside the content. */
const CHROME = 'nav, aside, footer, [role="navigation"], [role="banner"], [role="contentinfo"], [role="search"], [role="complementary"], [role="menu"], [role="menubar"], [role="toolbar"], [hidden], [aria-hidden="true"]';

/**
 * Words of a class or id that name chrome (after splitting on - _ . : and camelCase). Not
 * "header" (Javadoc's `div.header` holds the page's title) nor "content".
 */
const CHROME_WORDS = new Set([
  'nav', 'navbar', 'navigation', 'navpath', 'sidebar', 'sidenav', 'sphinxsidebar', 'sphinxsidebarwrapper', 'toc', 'toctree', 'breadcrumb',
  'breadcrumbs', 'pagination', 'pager', 'prevnext', 'footer', 'related', 'relations', 'cookie', 'cookies', 'consent', 'gdpr', 'skip',
  'menu', 'topbar', 'toolbar', 'edit', 'feedback',
  'share', 'social', 'search', 'searchbox', 'banner',
]);

/** Line numbers beside code (Pygments, Rouge, Prism, highlight.js): not the code's text. */
const LINE_NUMBERS = '.linenos, .lineno, .linenodiv, .gutter, .rouge-gutter, .line-numbers-rows, .hljs-ln-numbers';

/** Elements whose class or id may name chrome. */
const CONTAINERS = 'div, section, header, ul, ol, dl, li, table, p';

/** Glyphs that mark a heading's permalink. */
const PERMALINK_GLYPHS = /^[¶§#🔗⚓\u{1F517}\u200B\uFE0F\s]*$/u;

/** The content roots of a page (a cheerio selection: one element, or the document). */
export function contentRoots($: CheerioAPI): Cheerio<AnyNode> {
  for (const selector of MAIN) {
    const found = $(selector).first();
    if (found.length === 0) continue;
    const articles = found.find('article');
    return articles.length === 1 ? articles : found;
  }
  const articles = $('article');
  if (articles.length === 1) return articles;
  const body = $('body');
  if (body.length === 0) return $.root();
  // The whole body: its site-wide header goes too.
  body.find('header').remove();
  return body;
}

/** Removes the chrome inside the roots (the roots themselves are never removed). */
export function dropChrome($: CheerioAPI, roots: Cheerio<AnyNode>): void {
  roots.find(CHROME).remove();
  roots.find(LINE_NUMBERS).remove();
  roots.find('[style]').each((_, el) => {
    if (/display\s*:\s*none|visibility\s*:\s*hidden/i.test($(el).attr('style') ?? '')) $(el).remove();
  });
  // Containers only: an inline element's class is about its text (Sphinx's `a.toc-backref`
  // inside a heading is the heading's text).
  roots.find(CONTAINERS).each((_, el) => {
    if (namesChrome(`${$(el).attr('class') ?? ''} ${idOfChrome($, el as Element)}`)) $(el).remove();
  });
  // Permalinks: anchors of nothing but a glyph (headings, captions, definitions).
  roots.find('a').each((_, a) => {
    if (PERMALINK_GLYPHS.test($(a).text())) $(a).remove();
  });
  roots.find('a[href^="#"]').each((_, a) => {
    if (/^\s*(skip|jump) to\b/i.test($(a).text())) $(a).remove();
  });
  roots.find('ul, ol, dl, table').each((_, el) => {
    if (isNavigationList($, el as Element)) $(el).remove();
  });
}

/** A heading's text without the glyph its permalink or a theme leaves at its end. */
export function headingText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/[\s\u200B]*[¶§🔗⚓\u{1F517}\uFE0F]+[\s\u200B]*$/u, '')
    .replace(/\s+#$/, '')
    .trim();
}

/**
 * An element's id where it may name chrome: not a section's (generators make section ids of
 * headings: a section titled "Cookies" is content).
 */
function idOfChrome($: CheerioAPI, el: Element): string {
  const id = $(el).attr('id');
  if (!id || el.name === 'section' || el.name === 'article' || /^h[1-6]$/.test(el.name) || /\bsection\b/.test($(el).attr('class') ?? '')) return '';
  return $(el).children('h1, h2, h3, h4, h5, h6').length > 0 ? '' : id;
}

function namesChrome(classAndId: string): boolean {
  for (const word of classAndId.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_\-.:]+/)) {
    if (CHROME_WORDS.has(word)) return true;
  }
  return false;
}

/**
 * A list of three or more links into the same site (relative or #fragment) and nearly nothing
 * but their text: a table of contents, "previous / next", an index of pages. A list of links to
 * other sites (tools, references) is content; so is a section or paragraph, however linked.
 */
function isNavigationList($: CheerioAPI, el: Element): boolean {
  const links = $(el).find('a[href]');
  if (links.length < 3) return false;
  let internal = 0;
  let linked = 0;
  links.each((_, a) => {
    if (!/^([a-z][a-z0-9+.-]*:|\/\/)/i.test($(a).attr('href') ?? '')) internal++;
    linked += $(a).text().replace(/\s+/g, '').length;
  });
  if (internal < links.length * 0.8) return false;
  const all = $(el).text().replace(/\s+/g, '').length;
  return all === 0 || linked / all >= 0.85;
}
