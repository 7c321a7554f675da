// Prose sentences from Debian documentation packages, for the debian-minilm set (debian-minilm.ts).
// The packages are fetched with `apt-get download` into bench/.cache/debs (never installed) and
// unpacked with `dpkg-deb -x` into bench/.cache/debian-docs/<package>. HTML goes through the
// service's own HTML parser (scripts, styles, navigation and <pre> dropped, entities decoded), POD
// through a small reader of its own; plain text only where a package has no HTML (the same
// documents ship in several formats). Each paragraph is split into sentences, and a sentence is
// kept when it reads like prose.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseHtml } from '../../ingest/parse/formats/html.js';
import { debOf, downloadDebs } from '../debian-debs.js';
import { ensureDir, paths } from './paths.js';

/** Words per kept sentence. */
export const MIN_WORDS = 6;
export const MAX_WORDS = 60;

const debDir = join(paths.cache, 'debs');
const docDir = join(paths.cache, 'debian-docs');

export interface UnpackedPackage {
  name: string;
  /** The exact Debian version (from the .deb's control file). */
  version: string;
  root: string;
  include?: RegExp;
}

/** Downloads the packages not yet cached (one apt-get call) and unpacks each once per version. */
export function fetchDebianPackages(pkgs: readonly { name: string; include?: RegExp }[], log: (m: string) => void): UnpackedPackage[] {
  downloadDebs(debDir, pkgs.map((p) => p.name), log);
  return pkgs.map((p) => {
    const deb = debOf(debDir, p.name)!;
    const version = spawnSync('dpkg-deb', ['-f', deb, 'Version'], { encoding: 'utf8' }).stdout.trim();
    const root = join(docDir, p.name);
    const marker = join(root, '.unpacked');
    if (!existsSync(marker) || readFileSync(marker, 'utf8') !== version) {
      rmSync(root, { recursive: true, force: true });
      ensureDir(root);
      const x = spawnSync('dpkg-deb', ['-x', deb, root], { stdio: ['ignore', 'ignore', 'pipe'] });
      if (x.status !== 0) throw new Error(`dpkg-deb -x ${deb} failed: ${String(x.stderr).trim()}`);
      writeFileSync(marker, version);
    }
    return { ...p, version, root };
  });
}

/** The readable files under an unpacked package, sorted so the order never depends on the disk. */
export function documentFiles(root: string, include: RegExp | null): string[] {
  const all: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      // Symlinks are skipped: they point into packages not unpacked, or at folders walked anyway.
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && kindOf(p) && !/\/examples?\/|\/changelog|\/copyright$|\/_sources\//i.test(p) && (!include || include.test(p))) all.push(p);
    }
  };
  walk(root);
  const hasHtml = all.some((p) => kindOf(p) === 'html');
  return all.filter((p) => kindOf(p) !== 'text' || !hasHtml);
}

function kindOf(path: string): 'html' | 'pod' | 'text' | null {
  const name = basename(path).replace(/\.gz$/, '');
  if (/\.html?$/.test(name)) return 'html';
  if (/\.pod$/.test(name)) return 'pod';
  if (/\.txt$/.test(name)) return 'text';
  return null;
}

/** The prose paragraphs of one file, each on one line. */
export function paragraphsOf(path: string): string[] {
  const raw = readFileSync(path);
  const text = (path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  const kind = kindOf(path);
  if (kind === 'html') return parseHtml(text).blocks.filter((b) => b.kind === 'paragraph').map((b) => b.text);
  if (kind === 'pod') return podParagraphs(text);
  // Plain text: blank-line separated; an indented paragraph is code or a table.
  return text
    .split(/\n[ \t]*\n/)
    .filter((p) => !/^(\t| {4})/m.test(p))
    .map((p) => p.replace(/\s+/g, ' ').trim());
}

// ---------------------------------------------------------------------------------------------
// POD (perlpod): paragraphs separated by blank lines; `=command` paragraphs, verbatim (indented)
// ones and =begin/=end or =for regions are not prose. Formatting codes X<...> and X<< ... >> are
// replaced by their text.

function podParagraphs(pod: string): string[] {
  const out: string[] = [];
  let inRegion = false;
  for (const para of pod.split(/\n[ \t]*\n/)) {
    if (para.trim() === '') continue;
    if (/^=begin\b/.test(para)) inRegion = true;
    if (inRegion) {
      if (/^=end\b/m.test(para)) inRegion = false;
      continue;
    }
    if (/^[ \t]/.test(para) || /^=(for|cut|pod|over|back|encoding|head\d)\b/.test(para)) continue;
    // An =item's text can be a sentence ("=item * Every file is ..."); its bullet is not.
    const body = para.startsWith('=item') ? para.replace(/^=item\s*(\*|\d+\.?)?\s*/, '') : para;
    if (body.startsWith('=')) continue;
    out.push(podInline(body).replace(/\s+/g, ' ').trim());
  }
  return out;
}

const POD_ESCAPES: Record<string, string> = { lt: '<', gt: '>', verbar: '|', sol: '/', quot: '"', amp: '&', apos: "'" };

/** The text of POD formatting codes: B, I, C, F, S give their content, L its text, E a character. */
function podInline(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const code = s[i]!;
    if (/[A-Z]/.test(code) && s[i + 1] === '<') {
      let n = 1;
      while (s[i + 1 + n] === '<') n++;
      const end = n > 1 ? closeMulti(s, i + 1 + n, n) : closeSingle(s, i + 2);
      if (end >= 0) {
        const inner = n > 1 ? s.slice(i + 1 + n, end).trim() : s.slice(i + 2, end);
        out += renderCode(code, inner);
        i = end + n;
        continue;
      }
    }
    out += code;
    i++;
  }
  return out;
}

/** The index of the `>` closing a single-bracket code (nested codes counted). */
function closeSingle(s: string, from: number): number {
  let depth = 0;
  for (let j = from; j < s.length; j++) {
    if (s[j] === '<' && /[A-Z]/.test(s[j - 1] ?? '')) depth++;
    else if (s[j] === '>') {
      if (depth === 0) return j;
      depth--;
    }
  }
  return -1;
}

/** The index of the whitespace-preceded `>>...` (n brackets) closing a multi-bracket code. */
function closeMulti(s: string, from: number, n: number): number {
  const close = '>'.repeat(n);
  for (let j = s.indexOf(close, from); j >= 0; j = s.indexOf(close, j + 1)) if (/\s/.test(s[j - 1] ?? '')) return j;
  return -1;
}

function renderCode(code: string, inner: string): string {
  if (code === 'E') {
    if (/^(0x[0-9a-f]+|\d+)$/i.test(inner)) return String.fromCodePoint(Number(inner));
    return POD_ESCAPES[inner] ?? '';
  }
  if (code === 'X' || code === 'Z') return '';
  const text = podInline(inner);
  if (code !== 'L') return text;
  // L<text|target>, L<name/"section">, L<name>, L</section>
  const bar = text.indexOf('|');
  if (bar >= 0) return text.slice(0, bar);
  const m = /^([^/]*)\/"?([^"]*)"?$/.exec(text);
  if (!m) return text;
  return m[1] ? `"${m[2]}" in ${m[1]}` : `"${m[2]}"`;
}

// ---------------------------------------------------------------------------------------------
// Sentences.

// A full stop after one of these (or after a single capital, an initial) does not end a sentence.
const ABBREVIATION = /(?:\b(?:e\.g|i\.e|etc|cf|vs|viz|approx|esp|incl|resp|Mr|Mrs|Ms|Dr|St|No|Nos|Fig|Sec|Ch|Vol|Inc|Ltd|Co|al|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)|\b[A-Z])\.$/i;

/** The sentences of a paragraph: cut after . ! or ? (and closing quotes) before a capital or digit. */
export function splitSentences(paragraph: string): string[] {
  const pieces = paragraph.split(/(?<=[.!?]["')\]]*)\s+(?=["'(\[]?[A-Z0-9])/);
  const out: string[] = [];
  for (const p of pieces) {
    if (out.length > 0 && ABBREVIATION.test(out[out.length - 1]!)) out[out.length - 1] += ` ${p}`;
    else out.push(p);
  }
  return out.map((s) => s.trim());
}

// Characters that rarely occur in prose but often in code, paths, markup and tables.
const CODEISH = /[{}[\]<>=$@#%^*|\\~`_;+]/g;
// Function words: a sentence with none of them is a list of names, a heading or not English.
const FUNCTION_WORD = /\b(the|a|an|is|are|was|be|to|of|and|or|in|on|for|with|by|as|that|this|it|not|can|you)\b/i;

/** Whether a sentence reads like prose: 6 to 60 words, starts with a capital, ends with . ! or ?,
 * mostly letters, next to no code characters, English function words. */
export function isProse(s: string): boolean {
  const words = s.split(' ').length;
  if (words < MIN_WORDS || words > MAX_WORDS) return false;
  if (!/^["'(]?[A-Z]/.test(s) || !/[a-z][.!?]["')]?$/.test(s)) return false;
  if ((s.match(CODEISH)?.length ?? 0) > 1) return false;
  if (/https?:|www\.|\.\.\.|::|->|\/\w+\//.test(s)) return false;
  const chars = s.replace(/\s/g, '');
  const letters = chars.match(/[A-Za-z]/g)?.length ?? 0;
  if (letters < 0.8 * chars.length) return false;
  // A token of 30+ characters is an identifier, a path or a hash, not a word.
  if (s.split(' ').some((w) => w.length >= 30)) return false;
  return FUNCTION_WORD.test(s);
}

/** The key exact duplicates share: lower case, whitespace collapsed. */
export function dedupeKey(s: string): string {
  return s.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** The prose sentences of one file, in order (whitespace collapsed). */
export function sentencesOf(path: string): string[] {
  const out: string[] = [];
  for (const para of paragraphsOf(path)) for (const s of splitSentences(para.replace(/\s+/g, ' ').trim())) if (isProse(s)) out.push(s);
  return out;
}
