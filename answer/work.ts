/**
 * What the phases of one run share: the run and its question, the datasets in scope, the bounds,
 * the tools' context, and what the tools gathered and computed (the answer is written from them).
 * The service's collaborators (`AnswerDeps`) are passed beside it, the same for every run.
 */
import type { DatasetRecord } from '../catalog/datasets/record.js';
import type { DatasetService } from '../catalog/datasets/service.js';
import type { DatasetRows } from '../retrieval/rows.js';
import type { DocumentStore } from '../catalog/documents/store.js';
import type { SearchService } from '../retrieval/search.js';
import type { Budget } from './budget.js';
import type { DatasetView } from './plan/dataset-view.js';
import type { PreviewSigner } from './preview-ref.js';
import type { IntelligenceQuery, Mode } from './requests.js';
import type { Run } from './runs/run.js';
import type { RunStore } from './runs/run-store.js';
import type { SessionRecord, SessionStore } from './sessions/store.js';
import type { GenerativeModel } from './synthesis/generative.js';
import type { ComputeResult } from './tools/compute.js';
import type { RetrievedChunk, ToolContext } from './tools/context.js';

export interface AnswerDeps {
  datasets: DatasetService;
  /** A dataset's rows beside search (its engine dataset's, or in a cluster its shards'). */
  rowsOf(r: DatasetRecord): DatasetRows;
  search: SearchService;
  documents: DocumentStore;
  sessions: SessionStore;
  runs: RunStore;
  previews: PreviewSigner;
  revealSecret(orgId: string, ref: string): string | undefined;
}

/** The datasets asked about, and why some were left out. */
export interface Scope {
  views: Map<string, DatasetView>;
  /** Datasets checked into scope whose views are not read yet (describeScope reads them). */
  pending: { record: DatasetRecord; rows: DatasetRows }[];
  notes: string[];
}

/** One turn of the conversation a question follows. */
export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

export interface Work {
  run: Run;
  orgId: string;
  body: IntelligenceQuery;
  mode: Mode;
  session: SessionRecord | null;
  scope: Scope;
  budget: Budget;
  ctx: ToolContext;
  gathered: RetrievedChunk[];
  computed: ComputeResult[];
  model: GenerativeModel | null;
}
