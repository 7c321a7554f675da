/**
 * The document catalog of each dataset, in the control store's LMDB: one entry per original a
 * source holds (a file, a page, an issue), its status (processing, ready, failed), what it became
 * (chunks, tokens) and where its original is kept. Keyed [dataset, document] with an index from
 * [dataset, source, item] so a sync finds the document an item became.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'lmdb';
import type { ControlStore } from '../store.js';

export const DOCUMENT_STATUSES = ['processing', 'ready', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export interface DocumentRecord {
  id: string;
  dataset_id: string;
  org_id: string;
  source_id: string | null;
  source_type: string | null;
  /** The item's stable id within its source (a file name, a key, a page id). */
  item_id: string;
  name: string;
  path: string;
  url: string | null;
  content_type: string;
  size_bytes: number;
  status: DocumentStatus;
  title: string | null;
  format: string | null;
  /** sha256 of the bytes last ingested, and the source's own change signal (ETag, version). */
  content_hash: string | null;
  version: string | null;
  chunk_count: number;
  tokens: number;
  pages: number | null;
  /** Where the original's bytes are kept (never shown); null when it was not retained. */
  storage_key: string | null;
  error_type: string | null;
  error_message: string | null;
  job_id: string | null;
  created_at: string;
  updated_at: string;
}

/** The string id of a document's chunk (stored under its 53-bit hash, like any string id). */
export function chunkId(documentId: string, index: number): string {
  return `${documentId}:${index}`;
}

export class DocumentStore {
  private readonly db: Database<DocumentRecord, string[]>;
  private readonly items: Database<string, string[]>;

  constructor(private readonly store: ControlStore) {
    this.db = store.open('documents');
    this.items = store.open('documentItems');
  }

  get(datasetId: string, id: string): DocumentRecord | undefined {
    return this.db.get([datasetId, id]);
  }

  byItem(datasetId: string, sourceId: string | null, itemId: string): DocumentRecord | undefined {
    const id = this.items.get([datasetId, sourceId ?? '', itemId]);
    return id === undefined ? undefined : this.get(datasetId, id);
  }

  /** A new entry for an item (not stored until `put`). */
  fresh(o: Pick<DocumentRecord, 'dataset_id' | 'org_id' | 'source_id' | 'source_type' | 'item_id' | 'name' | 'path' | 'url' | 'content_type' | 'size_bytes'>): DocumentRecord {
    const now = new Date().toISOString();
    return {
      ...o,
      id: randomUUID(),
      status: 'processing',
      title: null,
      format: null,
      content_hash: null,
      version: null,
      chunk_count: 0,
      tokens: 0,
      pages: null,
      storage_key: null,
      error_type: null,
      error_message: null,
      job_id: null,
      created_at: now,
      updated_at: now,
    };
  }

  async put(doc: DocumentRecord): Promise<void> {
    await this.store.write(() => {
      this.db.put([doc.dataset_id, doc.id], { ...doc, updated_at: new Date().toISOString() });
      this.items.put([doc.dataset_id, doc.source_id ?? '', doc.item_id], doc.id);
    });
  }

  // A document's life in a sync, one transition each: `begin` (processing for a job), `bound`
  // (which of its chunk ids may be in the index), then `ready` or `fail`. Each writes the record
  // and resolves with it.

  /** A job starts on the document: processing, with what the job's file says of it now (a URL the source did not give keeps the one known). */
  async begin(doc: DocumentRecord, o: { job_id: string; size_bytes: number; content_type: string; url: string | null | undefined }): Promise<DocumentRecord> {
    const next: DocumentRecord = { ...doc, status: 'processing', job_id: o.job_id, size_bytes: o.size_bytes, content_type: o.content_type, url: o.url ?? doc.url };
    await this.put(next);
    return next;
  }

  /**
   * While it is processing, chunk_count bounds the chunk ids that may be in the index (the old
   * version's and the new one's), so a failure or a crash at any point can take them all out.
   */
  async bound(doc: DocumentRecord, chunks: number): Promise<DocumentRecord> {
    const next: DocumentRecord = { ...doc, chunk_count: Math.max(doc.chunk_count, chunks) };
    await this.put(next);
    return next;
  }

  /** Its chunks are indexed: searchable, with what parsing found and what it was made from. */
  async ready(doc: DocumentRecord, o: Pick<DocumentRecord, 'title' | 'format' | 'content_hash' | 'version' | 'chunk_count' | 'tokens' | 'pages' | 'storage_key'>): Promise<DocumentRecord> {
    const next: DocumentRecord = { ...doc, status: 'ready', ...o, error_type: null, error_message: null };
    await this.put(next);
    return next;
  }

  /** It failed: none of its chunks count any more (the caller took them out of the index); the original stays kept under `storageKey`. */
  async fail(doc: DocumentRecord, error: { type: string; message: string }, storageKey: string | null = doc.storage_key): Promise<DocumentRecord> {
    const next: DocumentRecord = { ...doc, status: 'failed', chunk_count: 0, storage_key: storageKey, error_type: error.type, error_message: error.message };
    await this.put(next);
    return next;
  }

  async remove(docs: DocumentRecord[]): Promise<void> {
    await this.store.write(() => {
      for (const d of docs) {
        this.db.remove([d.dataset_id, d.id]);
        this.items.remove([d.dataset_id, d.source_id ?? '', d.item_id]);
      }
    });
  }

  /** The documents a source brought into a dataset. */
  ofSource(datasetId: string, sourceId: string): DocumentRecord[] {
    return [...this.items.getRange({ start: [datasetId, sourceId], end: [datasetId, sourceId, '\uffff'] })]
      .map((e) => this.get(datasetId, e.value))
      .filter((d): d is DocumentRecord => d !== undefined);
  }

  /** The documents a job left processing (it ended without finishing them). */
  processingOf(datasetId: string, jobId: string): DocumentRecord[] {
    return [...this.db.getRange({ start: [datasetId], end: [datasetId, '\uffff'] })].map((e) => e.value).filter((d) => d.status === 'processing' && d.job_id === jobId);
  }

  /** A page of a dataset's documents after `after` (a document id), in id order. */
  page(datasetId: string, after: string | null, limit: number, status?: DocumentStatus): { documents: DocumentRecord[]; more: boolean } {
    const out: DocumentRecord[] = [];
    const start = after === null ? [datasetId] : [datasetId, after + '\u0000'];
    for (const { value } of this.db.getRange({ start, end: [datasetId, '\uffff'] })) {
      if (status !== undefined && value.status !== status) continue;
      if (out.length === limit) return { documents: out, more: true };
      out.push(value);
    }
    return { documents: out, more: false };
  }

  /** Every entry of a dataset (deleted with it). */
  async removeDataset(datasetId: string): Promise<void> {
    await this.store.write(() => {
      for (const key of this.db.getKeys({ start: [datasetId], end: [datasetId, '\uffff'] })) this.db.remove(key);
      for (const key of this.items.getKeys({ start: [datasetId], end: [datasetId, '\uffff'] })) this.items.remove(key);
    });
  }
}

/** A document as the API shows it: storage keys never, `download_available` instead. */
export function publicDocument(d: DocumentRecord) {
  return {
    id: d.id,
    name: d.name,
    path: d.path,
    url: d.url,
    content_type: d.content_type,
    size_bytes: d.size_bytes,
    status: d.status,
    download_available: d.storage_key !== null,
    title: d.title,
    format: d.format,
    source_id: d.source_id,
    source_type: d.source_type,
    chunk_count: d.chunk_count,
    tokens: d.tokens,
    pages: d.pages,
    error_type: d.error_type,
    error_message: d.error_message,
    job_id: d.job_id,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}
