/**
 * What a crawler needs from an HTML page: its links (resolved, fragments dropped), its canonical
 * URL, its title, and whether robots meta tags forbid indexing or following. Runs on a parse
 * thread, like every other reading of a page.
 */
import * as cheerio from 'cheerio';

export interface PageLinks {
  links: string[];
  canonical: string | null;
  title: string | null;
  noindex: boolean;
  nofollow: boolean;
}

export function pageLinks(html: string, pageUrl: string): PageLinks {
  const $ = cheerio.load(html);
  const base = resolve($('base[href]').attr('href') ?? '', pageUrl) ?? pageUrl;
  const robots = ($('meta[name="robots" i]').attr('content') ?? '').toLowerCase();
  const links = new Set<string>();
  $('a[href], area[href]').each((_, el) => {
    const rel = ($(el).attr('rel') ?? '').toLowerCase();
    if (rel.includes('nofollow')) return;
    const url = resolve($(el).attr('href')!, base);
    if (url) links.add(url);
  });
  const canonical = resolve($('link[rel="canonical" i]').attr('href') ?? '', base);
  const title = $('title').first().text().replace(/\s+/g, ' ').trim() || null;
  return { links: [...links], canonical, title, noindex: robots.includes('noindex') || robots.includes('none'), nofollow: robots.includes('nofollow') || robots.includes('none') };
}

/** An absolute http(s) URL without its fragment, or null. */
function resolve(href: string, base: string): string | null {
  if (!href || /^(mailto|javascript|tel|data):/i.test(href.trim())) return null;
  try {
    const u = new URL(href.trim(), base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    u.hash = '';
    return u.href;
  } catch {
    return null;
  }
}
