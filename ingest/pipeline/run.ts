/**
 * What an ingest job works with: its options, the services it reads and writes, and one run's
 * state (the job, its source and connector, the dataset's record), handed to each step.
 */
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import type { DatasetService } from '../../catalog/datasets/service.js';
import type { DocumentStore } from '../../catalog/documents/store.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { JobRecord } from '../../jobs/records.js';
import type { JobContext } from '../../jobs/runner.js';
import type { Embedder } from '../../retrieval/embeddings/embedder.js';
import type { VectorWrites } from '../../retrieval/vectors.js';
import type { Connector, ConnectorContext, Connectors } from '../connectors/connector.js';
import type { ParsePool } from '../parse/parse-pool.js';
import type { ScheduleRecords } from '../schedules/store.js';
import type { SourceRecord, SourceStore } from '../sources/store.js';

export interface IngestOptions {
  /** Wall time of one file: fetch, parse, embed, upsert. */
  fileTimeoutMs: number;
  /** Wall time of parsing and chunking one file (its thread is ended past it). */
  parseTimeoutMs: number;
  /** Files in flight at once. */
  concurrency: number;
  /** Chunks per embedding call and upsert. */
  batchChunks: number;
}

export const DEFAULT_INGEST: IngestOptions = { fileTimeoutMs: 15 * 60_000, parseTimeoutMs: 2 * 60_000, concurrency: 2, batchChunks: 128 };

/** Where the time of a pipeline goes (for metrics and the benchmark). */
export type StageObserver = (stage: 'fetch' | 'parse' | 'chunk' | 'embed' | 'index', ms: number, items: number) => void;

export interface IngestDeps {
  queue: JobQueue;
  sources: SourceStore;
  connectors: Connectors;
  documents: DocumentStore;
  datasets: DatasetService;
  embedder: Embedder;
  writes: VectorWrites;
  parse: ParsePool;
  schedules: ScheduleRecords;
  observe?: StageObserver;
}

/** One attempt at an ingest job. */
export interface Run {
  deps: IngestDeps;
  opts: IngestOptions;
  job: JobRecord;
  source: SourceRecord;
  connector: Connector;
  record: DatasetRecord;
  cctx: ConnectorContext;
  ctx: JobContext;
  incremental: boolean;
  t0: number;
}
