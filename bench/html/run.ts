// `npm run bench:html`: how much of what the HTML parser keeps is the page's content.
//
// Sphinx HTML in Debian's documentation packages ships each page's reStructuredText source
// (`_sources/<page>.txt` or `.rst.txt`): the exact main content of the page. Every page is parsed
// and chunked as ingestion does (ingest/parse/parse-worker.ts, the local model's chunking), and
// each chunk's words are looked up in its page's source. A word that is not in the source came
// from the page's chrome: navigation, sidebars, footers, permalink glyphs, "previous / next".
// Pages whose text comes from elsewhere (autodoc, include, literalinclude) are not scored.
//
//   npm run bench:html                 all packages, writes bench/results/html.{md,json}
//   npm run bench:html -- --pages=40   at most 40 pages a package (development)
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync, type Dirent } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join, sep } from 'node:path';
import parse from '../../ingest/parse/parse-worker.js';
import { chunkingFor } from '../../ingest/pipeline/budget.js';
import { gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { downloadDebs, unpackedDeb } from '../debian-debs.js';

/** Sphinx-built documentation of several themes (alabaster, classic, Read the Docs, bootstrap); none reserved by shared/libraries.md. */
const PACKAGES = [
  'python-behave-doc',
  'python-black-doc',
  'python-bs4-doc',
  'python-celery-doc',
  'python-chardet-doc',
  'python-cherrypy3-doc',
  'python-cmd2-doc',
];
/** Directives whose text is not in the page's own source. */
const FOREIGN = /^\s*\.\. (auto\w+|include|literalinclude)::/m;
/** Directives that render navigation (lists of other pages or sections): not content to keep. */
const NAVIGATION_DIRECTIVE = /^\.\. (toctree|contents)::.*\n(?:[ \t]+.*\n|[ \t]*\n)*/gm;
/** A word: letters and digits; and the permalink glyphs, which are chrome wherever they stand. */
const WORD = /[\p{L}\p{N}]+|[¶§🔗]/gu;

const log = (m: string) => process.stderr.write(`[html] ${m}\n`);

function flags(): { pages: number } {
  let pages = Infinity;
  for (const a of process.argv.slice(2)) {
    const m = /^--pages=(\d+)$/.exec(a);
    if (m) pages = Number(m[1]);
    else throw new Error(`unknown flag ${a} (--pages=N)`);
  }
  return { pages };
}

const words = (text: string) => (text.toLowerCase().match(WORD) ?? []) as string[];

interface Page {
  html: string;
  source: string;
}

/** The pages of an unpacked package that have their source, and no text from elsewhere. */
function pagesOf(root: string): Page[] {
  const out: Page[] = [];
  // Entries as they are (documentation packages link to shared JS that is not unpacked here).
  const files = (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[]).filter((e) => e.isFile());
  for (const e of files) {
    const source = join(e.parentPath, e.name);
    const at = source.lastIndexOf(`${sep}_sources${sep}`);
    if (at < 0 || !e.name.endsWith('.txt')) continue;
    const html = join(source.slice(0, at), source.slice(at + '/_sources/'.length).replace(/(\.rst)?\.txt$/, '.html'));
    if (existsSync(html) && !FOREIGN.test(readFileSync(source, 'utf8'))) out.push({ html, source });
  }
  return out.sort((a, b) => a.html.localeCompare(b.html));
}

interface PackageFigures {
  name: string;
  pages: number;
  chunks: number;
  words: number;
  /** Chunk words not in the page's source. */
  foreign: number;
  /** Permalink glyphs left in chunks. */
  glyphs: number;
  /** Distinct source words found in the page's chunks ÷ distinct source words (navigation directives excluded). */
  sourceKept: number;
  topForeign: [string, number][];
}

async function measure(name: string, root: string, limit: number): Promise<PackageFigures> {
  const pages = pagesOf(root).slice(0, limit);
  const chunking = chunkingFor('local');
  const foreignWords = new Map<string, number>();
  const f: PackageFigures = { name, pages: pages.length, chunks: 0, words: 0, foreign: 0, glyphs: 0, sourceKept: 0, topForeign: [] };
  let keptSum = 0;
  for (const page of pages) {
    const text = readFileSync(page.source, 'utf8');
    const source = new Set(words(text));
    const content = new Set(words(text.replace(NAVIGATION_DIRECTIVE, '')));
    const r = await parse({ path: page.html, name: basename(page.html), contentType: 'text/html', maxBytes: 64 << 20, chunking });
    if (!r.ok) continue;
    const seen = new Set<string>();
    for (const c of r.chunks) {
      f.chunks++;
      for (const w of words(c.text)) {
        f.words++;
        seen.add(w);
        if (w === '¶' || w === '§' || w === '🔗') f.glyphs++;
        if (!source.has(w)) {
          f.foreign++;
          foreignWords.set(w, (foreignWords.get(w) ?? 0) + 1);
        }
      }
    }
    let kept = 0;
    for (const w of content) if (seen.has(w)) kept++;
    keptSum += content.size > 0 ? kept / content.size : 1;
  }
  f.sourceKept = pages.length > 0 ? keptSum / pages.length : 0;
  f.topForeign = [...foreignWords].sort((a, b) => b[1] - a[1]).slice(0, 12);
  return f;
}

function unpacked(name: string): string {
  return unpackedDeb(join(paths.cache, 'html', 'debs'), join(paths.cache, 'html'), name);
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

async function main(): Promise<void> {
  const { pages } = flags();
  const started = Date.now();
  downloadDebs(join(paths.cache, 'html', 'debs'), PACKAGES, log);
  const figures: PackageFigures[] = [];
  for (const name of PACKAGES) {
    const f = await measure(name, unpacked(name), pages);
    log(`${name}: ${f.pages} pages, ${f.chunks} chunks, ${pct(f.foreign / Math.max(1, f.words))} of chunk words not in the source, ${f.glyphs} permalink glyphs`);
    figures.push(f);
  }
  const all = figures.reduce((s, f) => ({ words: s.words + f.words, foreign: s.foreign + f.foreign, glyphs: s.glyphs + f.glyphs, pages: s.pages + f.pages, chunks: s.chunks + f.chunks }), { words: 0, foreign: 0, glyphs: 0, pages: 0, chunks: 0 });
  const kept = figures.reduce((s, f) => s + f.sourceKept * f.pages, 0) / Math.max(1, all.pages);
  const commit = gitCommit();
  const L: string[] = [];
  L.push('# HTML main content (Sphinx pages against their own sources)', '');
  L.push(`Generated by \`npm run bench:html${Number.isFinite(pages) ? ` -- --pages=${pages}` : ''}\` on ${new Date().toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s; commit \`${commit}\`, Node ${process.version}, ${cpus().length} CPUs.`, '');
  L.push('Each page of the packages below is parsed and chunked as ingestion does (the local model\'s chunking). "Not in the source": the share of the chunks\' words that its page\'s reStructuredText source (`_sources/`) does not hold: the chrome that got through (navigation, sidebars, footers, "previous / next", permalink glyphs). "Source words kept": the share of the source\'s distinct words found in the page\'s chunks, which falls when content is cut (markup words of reStructuredText never are, so 100% is out of reach; the lists of pages and sections that `toctree` and `contents` directives render are navigation, not counted). Pages with autodoc, include or literalinclude directives are not scored (their text is not in their source).', '');
  L.push('| package | pages | chunks | chunk words | not in the source | permalink glyphs | source words kept | most frequent words not in the source |');
  L.push('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const f of figures) L.push(`| ${f.name} | ${f.pages} | ${f.chunks} | ${f.words.toLocaleString('en-US')} | ${pct(f.foreign / Math.max(1, f.words))} | ${f.glyphs} | ${pct(f.sourceKept)} | ${f.topForeign.map(([w, n]) => `${w} ${n}`).join(', ')} |`);
  L.push(`| **all** | ${all.pages} | ${all.chunks} | ${all.words.toLocaleString('en-US')} | **${pct(all.foreign / Math.max(1, all.words))}** | ${all.glyphs} | ${pct(kept)} | |`, '');
  const out = Number.isFinite(pages) ? paths.cache : paths.results;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'html.md'), L.join('\n'));
  writeFileSync(join(out, 'html.json'), JSON.stringify({ commit, node: process.version, pages, figures, all: { ...all, sourceKept: kept } }, null, 2) + '\n');
  process.stdout.write(L.join('\n') + `\nwrote ${join(out, 'html.md')}\n`);
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`bench:html failed: ${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
