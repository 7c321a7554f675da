/**
 * A document's chunks in the dataset's index: embedded in batches and upserted as one vector per
 * chunk, with the text and provenance search shows; and taken out again, from the tail a shorter
 * new version left to all of them when the document fails or leaves its source.
 */
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import { chunkId, type DocumentRecord } from '../../catalog/documents/store.js';
import { Interrupted } from '../../jobs/runner.js';
import type { VectorWrites } from '../../retrieval/vectors.js';
import type { Chunk } from '../parse/chunker.js';
import type { Run } from './run.js';

/** Embeds the chunks in batches and upserts one vector per chunk; returns their tokens. */
export async function indexChunks(run: Run, doc: DocumentRecord, chunks: Chunk[], stopped: () => boolean): Promise<number> {
  const { deps, opts, record, job } = run;
  let tokens = 0;
  for (let at = 0; at < chunks.length; at += opts.batchChunks) {
    if (stopped()) throw new Interrupted();
    const batch = chunks.slice(at, at + opts.batchChunks);
    let t = Date.now();
    const vectors = await deps.embedder.embed(job.org_id, { ...record.embedding, dim: record.dim }, batch.map((c) => c.text), 'document');
    deps.observe?.('embed', Date.now() - t, batch.length);
    t = Date.now();
    await deps.writes.insert(job.org_id, record, {
      vectors: batch.map((c, i) => ({ id: chunkId(doc.id, c.index), values: vectors[i], metadata: chunkMetadata(doc, c) })),
    });
    deps.observe?.('index', Date.now() - t, batch.length);
    tokens += batch.reduce((s, c) => s + c.tokens, 0);
  }
  return tokens;
}

/** Deletes the document's chunks from index `from` up to its chunk_count (all of them by default). */
export async function deleteChunks(writes: VectorWrites, record: DatasetRecord, doc: DocumentRecord, from = 0): Promise<void> {
  if (doc.chunk_count <= from) return;
  await writes.delete(record, { ids: Array.from({ length: doc.chunk_count - from }, (_, i) => chunkId(doc.id, from + i)) });
}

/** What a chunk's vector carries: its text (documents, hybrid search) and its provenance. */
function chunkMetadata(doc: DocumentRecord, c: Chunk): Record<string, string | number> {
  const m: Record<string, string | number | null | undefined> = {
    text: c.text,
    document_id: doc.id,
    chunk_index: c.index,
    name: doc.name,
    path: doc.path,
    url: doc.url,
    content_type: doc.content_type,
    source_id: doc.source_id,
    source_type: doc.source_type,
    heading: c.heading,
    page: c.page,
    page_end: c.pageEnd !== c.page ? c.pageEnd : null,
    sheet_name: c.sheet,
    row_start: c.rowStart,
    row_end: c.rowEnd,
    column_names: c.columnNames?.join(', '),
    char_start: c.charStart,
    char_end: c.charEnd,
  };
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null && v !== undefined)) as Record<string, string | number>;
}
