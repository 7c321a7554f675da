/**
 * Blocks to chunks sized for an embedding model: each chunk's text is at most `maxTokens` word
 * pieces (the local model's window holds 254 besides [CLS] and [SEP], so a chunk is never cut
 * into averaged windows), aims at `targetTokens`, and breaks at headings, sheets, paragraphs and
 * rows first, then sentences, then words. A chunk that closes because it is full carries its
 * last sentences (up to `overlapTokens`) into the next one. Every chunk says where it came from:
 * character offsets into the document's text (the blocks joined by blank lines), the heading path
 * above it, page, sheet and rows.
 */
import type { Block, ParsedDocument } from './document.js';

export interface ChunkingOptions {
  maxTokens: number;
  targetTokens: number;
  overlapTokens: number;
}

export interface Chunk {
  index: number;
  text: string;
  tokens: number;
  charStart: number;
  charEnd: number;
  /** Headings above the chunk, outermost first, joined by " > ". */
  heading: string | null;
  page: number | null;
  pageEnd: number | null;
  sheet: string | null;
  rowStart: number | null;
  rowEnd: number | null;
  columnNames: string[] | null;
}

/** Token counting: the embedding model's word pieces of a text (no special tokens). */
export type CountTokens = (text: string) => number;

interface Unit {
  text: string;
  tokens: number;
  start: number;
  end: number;
  block: Block;
  /** The unit is a whole block (not a sentence or word run cut from one). */
  whole: boolean;
  /** The headings in effect at this unit (a heading's own included). */
  path: string | null;
}

const SEPARATOR = '\n\n';

export function chunk(doc: ParsedDocument, count: CountTokens, opts: ChunkingOptions): { chunks: Chunk[]; chars: number } {
  const text = doc.blocks.map((b) => b.text).join(SEPARATOR);
  const units: Unit[] = [];
  const headings: string[] = [];
  let at = 0;
  for (const block of doc.blocks) {
    if (block.kind === 'heading') {
      headings.length = Math.min(headings.length, Math.max(0, (block.level ?? 1) - 1));
      headings.push(block.text);
    }
    const path = headings.length > 0 ? headings.join(' > ') : null;
    for (const u of unitsOf(block, at, count, opts.maxTokens)) units.push({ ...u, path });
    at += block.text.length + SEPARATOR.length;
  }

  const chunks: Chunk[] = [];
  let current: Unit[] = [];
  let tokens = 0;
  const close = (full: boolean) => {
    if (current.length === 0) return;
    chunks.push(make(chunks.length, current, text, count));
    // A chunk that closed because it was full hands its last sentences or paragraphs on.
    const carried: Unit[] = [];
    if (full) {
      let t = 0;
      for (let i = current.length - 1; i > 0; i--) {
        const u = current[i];
        if (u.block.kind === 'heading' || u.block.kind === 'row' || t + u.tokens > opts.overlapTokens) break;
        carried.unshift(u);
        t += u.tokens;
      }
    }
    current = carried;
    tokens = carried.reduce((sum, u) => sum + u.tokens, 0);
  };

  for (const u of units) {
    const b = u.block;
    const last = current.at(-1)?.block;
    const hasBody = current.some((x) => x.block.kind !== 'heading');
    // A section, a sheet or a table starts its own chunk (the headings just above go with it).
    const newPart =
      (u.whole && b.kind === 'heading') ||
      (last !== undefined && ((b.sheet ?? null) !== (last.sheet ?? null) || (b.kind === 'row') !== (last.kind === 'row')));
    if (newPart && hasBody) close(false);
    else if (tokens + u.tokens > opts.maxTokens) close(true);
    else if (tokens >= opts.targetTokens && u.whole && hasBody) close(true);
    // What was carried over may still leave no room: then the chunk starts afresh.
    if (tokens + u.tokens > opts.maxTokens) {
      current = [];
      tokens = 0;
    }
    current.push(u);
    tokens += u.tokens;
  }
  close(false);
  return { chunks, chars: text.length };
}

function make(index: number, units: Unit[], text: string, count: CountTokens): Chunk {
  const first = units[0];
  const body = units.find((u) => u.block.kind !== 'heading') ?? units[units.length - 1];
  const pages = units.map((u) => u.block.page).filter((p): p is number => p !== undefined);
  const rows = units.map((u) => u.block.row).filter((r): r is number => r !== undefined);
  const charEnd = units[units.length - 1].end;
  // The document's text from the first unit to the last, as written (blank lines included).
  const slice = text.slice(first.start, charEnd);
  return {
    index,
    text: slice,
    tokens: count(slice),
    charStart: first.start,
    charEnd,
    heading: body.path,
    page: pages.length > 0 ? pages[0] : null,
    pageEnd: pages.length > 0 ? pages[pages.length - 1] : null,
    sheet: first.block.sheet ?? null,
    rowStart: rows.length > 0 ? rows[0] : null,
    rowEnd: rows.length > 0 ? rows[rows.length - 1] : null,
    columnNames: first.block.columns ?? null,
  };
}

/** A block as units that fit: itself, else its sentences, else runs of its words. */
function unitsOf(block: Block, start: number, count: CountTokens, max: number): Omit<Unit, 'path'>[] {
  const tokens = count(block.text);
  if (tokens <= max) return [{ text: block.text, tokens, start, end: start + block.text.length, block, whole: true }];
  const out: Omit<Unit, 'path'>[] = [];
  for (const s of sentences(block.text)) {
    const t = count(s.text);
    if (t <= max) out.push({ text: s.text, tokens: t, start: start + s.start, end: start + s.start + s.text.length, block, whole: false });
    else out.push(...wordRuns(s.text, start + s.start, block, count, max));
  }
  return out;
}

/** Runs of whole words of at most `max` tokens (a word longer than that is cut by characters). */
function wordRuns(text: string, start: number, block: Block, count: CountTokens, max: number): Omit<Unit, 'path'>[] {
  const out: Omit<Unit, 'path'>[] = [];
  let run: { text: string; start: number } | null = null;
  let runTokens = 0;
  const push = () => {
    if (run) out.push({ text: run.text, tokens: runTokens, start: start + run.start, end: start + run.start + run.text.length, block, whole: false });
    run = null;
    runTokens = 0;
  };
  for (const w of spans(text, /\S+/g)) {
    let word = w;
    let t = count(word.text);
    while (t > max) {
      // One "word" longer than the window (a hash, base64): cut it where it fits.
      let cut = Math.floor((word.text.length * max) / t);
      while (cut > 1 && count(word.text.slice(0, cut)) > max) cut = Math.floor(cut * 0.9);
      push();
      out.push({ text: word.text.slice(0, cut), tokens: count(word.text.slice(0, cut)), start: start + word.start, end: start + word.start + cut, block, whole: false });
      word = { text: word.text.slice(cut), start: word.start + cut };
      t = count(word.text);
    }
    if (run && runTokens + t > max) push();
    if (!run) run = { text: word.text, start: word.start };
    else run.text = text.slice(run.start, word.start + word.text.length);
    runTokens += t;
  }
  push();
  return out.filter((u) => u.text.trim() !== '');
}

/** Sentences (ended by . ! ? before whitespace, or by a line end), covering all of `text`. */
function sentences(text: string): { text: string; start: number }[] {
  const out: { text: string; start: number }[] = [];
  let from = 0;
  const add = (to: number) => {
    const piece = text.slice(from, to);
    const t = piece.trim();
    if (t !== '') out.push({ text: t, start: from + (piece.length - piece.trimStart().length) });
  };
  for (const m of text.matchAll(/(?<=[.!?])\s+|\n\s*/g)) {
    add(m.index!);
    from = m.index! + m[0].length;
  }
  add(text.length);
  return out;
}

function spans(text: string, re: RegExp): { text: string; start: number }[] {
  const out: { text: string; start: number }[] = [];
  for (const m of text.matchAll(re)) {
    const lead = m[0].length - m[0].trimStart().length;
    const t = m[0].trim();
    if (t !== '') out.push({ text: t, start: (m.index ?? 0) + lead });
  }
  return out;
}
