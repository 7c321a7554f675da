/**
 * What every tool of a run shares: the organization, the datasets in scope (with their fields),
 * the caller's filters (authorization: every tool adds them to what it reads), the run's abort
 * signal, and the chunks gathered so far, which become the answer's sources.
 */
import type { Scalar } from '../../contract/json-schema.js';
import type { AdvancedFilter } from '../../engine/index.js';
import type { DatasetView } from '../plan/dataset-view.js';

export interface CallerFilters {
  filters?: Record<string, Scalar>;
  advanced?: AdvancedFilter[];
}

export interface ToolContext {
  orgId: string;
  views: Map<string, DatasetView>;
  caller: CallerFilters;
  signal: AbortSignal;
}

/** A chunk a tool read: what a source entry, a citation and the top-level `chunks` are made of. */
export interface RetrievedChunk {
  dataset_id: string;
  /** The engine's id, and the id the API shows (the string id when the vector has one). */
  id: number;
  chunk_id: string;
  /** The search's score (ascending, like every score of the API); 0 for chunks read whole. */
  score: number;
  /** 0-1, higher is more relevant. */
  relevance: number;
  text: string;
  metadata: Record<string, Scalar>;
}

/** The caller's filters and a plan's, together: the caller's are never dropped nor widened. */
export function withCallerFilters(caller: CallerFilters, planned: AdvancedFilter[] = []) {
  return { filters: caller.filters, advanced_filters: [...(caller.advanced ?? []), ...planned] };
}
