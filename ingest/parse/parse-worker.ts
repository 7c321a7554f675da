/**
 * Runs on a parse pool thread: reads a staged file, parses it, and chunks it for the embedding
 * model (token counts from the local model's tokenizer, loaded once per thread). A file that
 * cannot be parsed answers with a typed problem; nothing is thrown for bad input.
 */
import { open } from 'node:fs/promises';
import { localTokenizer, lowerThisThreadPriority, type WordPieceTokenizer } from '../../engine/index.js';
import type { FileErrorType } from '../../errors/job-errors.js';
import { chunk, type Chunk, type ChunkingOptions } from './chunker.js';
import { ParseError } from './document.js';
import type { Selectors } from './formats/html.js';
import { pageLinks, type PageLinks } from './links.js';
import { parseBytes } from './parse.js';

// Parsing is background work: searches take the CPU first.
lowerThisThreadPriority();

export interface ParseTask {
  path: string;
  name: string;
  contentType: string;
  maxBytes: number;
  selectors?: Selectors;
  chunking: ChunkingOptions;
}

export type ParseResult =
  | { ok: true; format: string; title: string | null; chunks: Chunk[]; chars: number; pages: number | null; parseMs: number; chunkMs: number }
  | { ok: false; type: FileErrorType; message: string };

let tokenizer: WordPieceTokenizer | null = null;
const counts = new Map<string, number>();

/** Word pieces of a text; single words are remembered (text repeats its words). */
function count(text: string): number {
  tokenizer ??= localTokenizer();
  if (!/\s/.test(text) && text.length < 48) {
    let n = counts.get(text);
    if (n === undefined) {
      n = tokenizer.encode(text).ids.length;
      if (counts.size > 200_000) counts.clear();
      counts.set(text, n);
    }
    return n;
  }
  return tokenizer.encode(text).ids.length;
}

export default async function parse(task: ParseTask): Promise<ParseResult> {
  const t0 = performance.now();
  try {
    const file = await open(task.path, 'r');
    let bytes: Uint8Array;
    try {
      const size = (await file.stat()).size;
      if (size > task.maxBytes) return { ok: false, type: 'file_too_large', message: `${size} bytes; the limit is ${task.maxBytes}` };
      if (size === 0) return { ok: false, type: 'empty_document', message: 'the file is empty' };
      bytes = new Uint8Array(size);
      await file.read(bytes, 0, size, 0);
    } finally {
      await file.close();
    }
    const { format, doc } = await parseBytes(bytes, task.name, task.contentType, task.selectors);
    const t1 = performance.now();
    const { chunks, chars } = chunk(doc, count, task.chunking);
    if (chunks.length === 0) return { ok: false, type: 'empty_document', message: `no text was found in the ${format} file` };
    return { ok: true, format, title: doc.title, chunks, chars, pages: doc.pages ?? null, parseMs: t1 - t0, chunkMs: performance.now() - t1 };
  } catch (e) {
    if (e instanceof ParseError) return { ok: false, type: e.type, message: e.message };
    return { ok: false, type: 'parse_failed', message: `the file could not be parsed: ${(e as Error)?.message ?? e}` };
  }
}

export interface LinksTask {
  html: string;
  url: string;
}

/** The links of a page a crawler fetched (named task `links`). */
export function links(task: LinksTask): PageLinks {
  return pageLinks(task.html, task.url);
}
