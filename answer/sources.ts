/**
 * The chunks a run gathered, as the contract's `sources` (one per document, in order of first
 * appearance, so `[n]` is `sources[n-1]`) and top-level `chunks`, with metadata sanitized: no
 * storage keys, no payload references, no chunk text twice.
 */
import type { Scalar } from '../contract/json-schema.js';
import { openingHeadingsCut, type ExtractiveChunk } from './synthesis/extractive.js';
import { visibleMetadata } from '../retrieval/vectors.js';
import type { PreviewSigner } from './preview-ref.js';
import type { RetrievedChunk } from './tools/context.js';

const PREVIEW_CHARS = 300;

export interface SourceGroup {
  key: string;
  chunks: RetrievedChunk[];
}

/** Chunks grouped by document (dataset + document id, else name), first appearance first. */
export function groupSources(chunks: RetrievedChunk[]): SourceGroup[] {
  const groups = new Map<string, SourceGroup>();
  const seen = new Set<string>();
  for (const c of chunks) {
    const id = `${c.dataset_id}\u0000${c.id}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const doc = c.metadata.document_id ?? c.metadata.name ?? c.chunk_id;
    const key = `${c.dataset_id}\u0000${String(doc)}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, chunks: [] }));
    g.chunks.push(c);
  }
  return [...groups.values()];
}

const str = (v: Scalar | undefined): string | null => (typeof v === 'string' ? v : null);
const int = (v: Scalar | undefined): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);

export function sourceEntry(g: SourceGroup, orgId: string, signer: PreviewSigner) {
  const best = g.chunks.reduce((a, b) => (b.relevance > a.relevance ? b : a), g.chunks[0]);
  const m = best.metadata;
  const pages = new Set<number>();
  const sheets = new Set<string>();
  for (const c of g.chunks) {
    const first = int(c.metadata.page);
    const last = int(c.metadata.page_end) ?? first;
    if (first !== null && last !== null) for (let p = first; p <= last && p - first < 1000; p++) pages.add(p);
    const sheet = str(c.metadata.sheet_name);
    if (sheet) sheets.add(sheet);
  }
  const documentId = str(m.document_id);
  return {
    name: str(m.name) ?? str(m.title) ?? best.chunk_id,
    path: str(m.path),
    url: str(m.url),
    source_type: str(m.source_type),
    dataset_id: best.dataset_id,
    dataset_document_id: documentId,
    content_type: str(m.content_type),
    relevance: best.relevance,
    pages: [...pages].sort((a, b) => a - b),
    sheet_names: [...sheets],
    chunk_count: g.chunks.length,
    preview: best.text.slice(0, PREVIEW_CHARS),
    preview_ref: signer.sign({ org: orgId, dataset: best.dataset_id, document: documentId, ids: g.chunks.slice(0, 20).map((c) => c.id) }),
    chunks: g.chunks.map((c) => ({
      chunk_id: c.chunk_id,
      score: c.score,
      text: c.text,
      chunk_index: int(c.metadata.chunk_index),
      sheet_name: str(c.metadata.sheet_name),
      row_start: int(c.metadata.row_start),
      row_end: int(c.metadata.row_end),
      column_names: typeof c.metadata.column_names === 'string' ? c.metadata.column_names.split(', ') : null,
    })),
    timestamp_start: null,
    timestamp_end: null,
    file_id: documentId,
    thumbnail_url: null,
  };
}

export type SourceEntry = ReturnType<typeof sourceEntry>;

export function chunkEntry(c: RetrievedChunk) {
  return {
    id: c.chunk_id,
    text: c.text,
    score: c.score,
    source: str(c.metadata.name) ?? c.chunk_id,
    source_url: str(c.metadata.url),
    page: int(c.metadata.page),
    metadata: { ...visibleMetadata(c.metadata, false), dataset_id: c.dataset_id },
  };
}

/** A gathered chunk as the extractive answerer reads it: its text, headings and relevance. */
export function extractiveChunk(c: RetrievedChunk, rank: number): ExtractiveChunk {
  const headings = typeof c.metadata.heading === 'string' ? c.metadata.heading.split(' > ') : [];
  const body = openingHeadingsCut(c.text, headings);
  return { text: body.text, headings, relevance: c.relevance, rank, startsSection: c.metadata.chunk_index === 0 || body.opensSection };
}
