/**
 * The read_document tool: a whole document from its chunks, in order. An ingested document's
 * chunks are found through the document catalog (their ids follow from the document's); vectors
 * inserted by API with a `document_id` field are found by that field. Either way the caller's
 * filters decide which chunks may be read.
 */
import { fnv1a53 } from '../../catalog/datasets/ids.js';
import { chunkId, type DocumentStore } from '../../catalog/documents/store.js';
import { withCallerFilters, type RetrievedChunk, type ToolContext } from './context.js';

/** Chunks read at most from one document (a longer one is cut, and says so). */
export const MAX_DOCUMENT_CHUNKS = 400;

export interface DocumentRead {
  chunks: RetrievedChunk[];
  name: string | null;
  /** Chunks the document holds past MAX_DOCUMENT_CHUNKS. */
  truncated: boolean;
}

export async function readDocumentTool(documents: DocumentStore, ctx: ToolContext, datasetId: string, documentId: string): Promise<DocumentRead> {
  const view = ctx.views.get(datasetId);
  if (!view) throw new Error(`dataset ${datasetId} is not in this question's scope`);
  const { filters, advanced_filters } = withCallerFilters(ctx.caller);
  const doc = documents.get(datasetId, documentId);
  let ids: Float64Array;
  let truncated = false;
  if (doc) {
    const n = Math.min(doc.chunk_count, MAX_DOCUMENT_CHUNKS);
    truncated = doc.chunk_count > n;
    ids = Float64Array.from({ length: n }, (_, i) => fnv1a53(chunkId(doc.id, i)));
    const allowed = await view.rows.admits(ids, filters, advanced_filters);
    ids = ids.filter((_, i) => allowed[i] === 1);
  } else {
    const m = await view.rows.matching(filters, [...advanced_filters, { field: 'document_id', op: 'eq', value: documentId }], MAX_DOCUMENT_CHUNKS);
    ids = m.ids;
    truncated = m.truncated;
  }
  const chunks: RetrievedChunk[] = [];
  const rows = await view.rows.metadata(ids);
  for (const [k, id] of ids.entries()) {
    const metadata = { ...(rows[k] ?? {}) };
    const text = typeof metadata.text === 'string' ? metadata.text : '';
    delete metadata.text;
    const external = typeof metadata.document_id === 'string' && typeof metadata.chunk_index === 'number' ? chunkId(metadata.document_id, metadata.chunk_index) : String(id);
    chunks.push({ dataset_id: datasetId, id, chunk_id: external, score: 0, relevance: 0, text, metadata });
  }
  chunks.sort((a, b) => Number(a.metadata.chunk_index ?? 0) - Number(b.metadata.chunk_index ?? 0));
  return { chunks, name: doc?.name ?? (typeof chunks[0]?.metadata.name === 'string' ? chunks[0].metadata.name : null), truncated };
}
