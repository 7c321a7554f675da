/**
 * Vector search, executed here from start to end: the query checked, a plan (segment handles and
 * native options), the segments searched (on this thread, or split into shards for a runner's
 * threads), the shards merged, the tuner fed, hits and the receipt of what the engine did.
 * Searches never wait for writes, seals or builds.
 */
import { performance } from 'node:perf_hooks';
import { invalid } from '../../errors/codes.js';
import { compileFilters } from '../filters.js';
import { native, type NativeQueryOptions, type NativeResult } from '../native.js';
import { bytesToFloat32 } from '../lmdb-store.js';
import type { BatchSearchOptions, Hit, Metadata, Receipt, SearchOptions, ShardRunner } from '../types.js';
import { DEFAULT_TOP_K, MAX_TOP_K } from '../vocabulary.js';
import { runShards } from './batcher.js';
import type { DatasetCore } from './core.js';
import { boundNprobe, hasNprobeBounds } from './tuning.js';
import { checkValues } from './writes.js';

/** What a search runs with: segment handles and native options. */
interface SearchPlan {
  handles: number[];
  options: NativeQueryOptions;
}

/**
 * One search, down once and back once: on this thread, or on `runner`'s threads (one shard on
 * the libuv pool in a batch of its turn, several shards in parallel on the runner).
 */
export async function execute(core: DatasetCore, query: Float32Array, opts: SearchOptions = {}, runner?: ShardRunner): Promise<{ hits: Hit[]; receipt: Receipt }> {
  checkQuery(core, query, 1);
  const p = plan(core, opts);
  const t0 = performance.now();
  let results: NativeResult[];
  if (runner) {
    const done = core.retirement.hold();
    try {
      results = await runShards(runner, p.handles, query, p.options);
    } finally {
      done();
    }
  } else {
    results = [native.search(p.handles, query, p.options)];
  }
  const merged = mergeShards(results, p.options.k, p.options.distinct ?? false);
  const elapsed = Math.round((performance.now() - t0) * 1000);
  recordLatency(core, elapsed);
  return { hits: hits(core, merged, opts.includeMetadata ?? true), receipt: receiptOf(results, elapsed) };
}

export function plan(core: DatasetCore, opts: SearchOptions = {}): SearchPlan {
  core.checkOpen();
  const k = opts.topK ?? DEFAULT_TOP_K;
  if (!Number.isInteger(k) || k < 1 || k > MAX_TOP_K) throw invalid(`topK must be an integer from 1 to ${MAX_TOP_K}`);
  for (const [name, v] of [['nprobe', opts.nprobe], ['beamWidth', opts.beamWidth], ['rerankDepth', opts.rerankDepth]] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 1_000_000)) throw invalid(`${name} must be a non-negative integer`);
  }
  const options: NativeQueryOptions = {
    k,
    nprobe: opts.nprobe,
    beamWidth: opts.beamWidth,
    rerankDepth: opts.rerankDepth,
    exact: opts.exact,
    // While a bulk load gathers partitions, a row copied into the gathered one is also in its
    // source until the source leaves the list: a search planned meanwhile may meet it twice.
    distinct: core.gathered !== null,
    predicates: compileFilters(core.ctx, opts.filters, opts.advancedFilters),
  };
  if (opts.nprobe === undefined && opts.beamWidth === undefined && (core.tuner.active || hasNprobeBounds(core))) {
    // The engine picks the knobs: the tuner's, else the index's default, held in the caller's bounds.
    const defaults = indexDefaults(core);
    if (core.tuner.active) Object.assign(options, core.tuner.knobs(defaults));
    const picked = options.nprobe ?? defaults.nprobe;
    if (picked > 0 && hasNprobeBounds(core)) options.nprobe = boundNprobe(core, picked);
  }
  return { handles: core.partitions.map((p) => p.handle), options };
}

/** Turns native results into hits (with metadata unless asked not to). */
function hits(core: DatasetCore, result: NativeResult, includeMetadata = true): Hit[] {
  return hitsBetween(core, result.ids, result.scores, 0, result.ids.length, includeMetadata);
}

function hitsBetween(core: DatasetCore, ids: Float64Array, scores: Float32Array, from: number, to: number, includeMetadata: boolean): Hit[] {
  const out: Hit[] = new Array(to - from);
  for (let i = from; i < to; i++) {
    const id = ids[i]!;
    const hit: Hit = { id, score: scores[i]! };
    if (includeMetadata) hit.metadata = core.storage.meta.get([core.uid, id]) ?? {};
    out[i - from] = hit;
  }
  return out;
}

/** Feeds the SLA tuner with the latency of a search (run here or on a runner's threads). */
function recordLatency(core: DatasetCore, us: number): void {
  core.tuner.record(us, core.tuner.active ? indexDefaults(core).nlist : 0);
}

/** One hits array per query; `threads` threads answer the batch off the JS thread. */
export async function searchBatch(core: DatasetCore, queries: Float32Array, opts: BatchSearchOptions = {}): Promise<Hit[][]> {
  checkQuery(core, queries, 0);
  const threads = opts.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1 || threads > 256) throw invalid('threads must be an integer from 1 to 256');
  const p = plan(core, opts);
  const batch = await native.searchBatch(p.handles, queries, p.options, threads);
  const withMetadata = opts.includeMetadata ?? true;
  const answers: Hit[][] = new Array(batch.offsets.length - 1);
  for (let q = 0; q < answers.length; q++) answers[q] = hitsBetween(core, batch.ids, batch.scores, batch.offsets[q]!, batch.offsets[q + 1]!, withMetadata);
  return answers;
}

/**
 * A query (exactCount 1) or a batch of queries of the dataset's dimension, finite values only:
 * the one dimension check of every search (the binding keeps an assert).
 */
export function checkQuery(core: DatasetCore, q: Float32Array, exactCount: number): void {
  if (!(q instanceof Float32Array)) throw invalid('the query must be a Float32Array');
  if (exactCount === 1 ? q.length !== core.dim : q.length % core.dim !== 0) {
    throw invalid(`query has ${q.length} values; the dataset dimension is ${core.dim}`);
  }
  for (let at = 0; at < q.length; at += core.dim) checkValues(q, at, core.dim, 'the query');
}

/** nprobe and beam width of the first built index (what the tuner moves from). */
function indexDefaults(core: DatasetCore): { nprobe: number; beamWidth: number; nlist: number } {
  for (const p of core.partitions) {
    const s = native.segmentStats(p.handle);
    if (s.indexStatus === 'ready') return { nprobe: s.defaultNprobe, beamWidth: s.defaultBeamWidth, nlist: s.nlist };
  }
  return { nprobe: 0, beamWidth: 0, nlist: 0 };
}

/** The receipt of one or more native results (shards of one search): what each partition did. */
function receiptOf(results: NativeResult | NativeResult[], elapsedUs: number): Receipt {
  const all = Array.isArray(results) ? results : [results];
  const partitions = all.flatMap((r) => r.partitions);
  let strategy = '';
  let searched = 0;
  let recallRows = 0;
  let rows = 0;
  let unknown = false;
  for (const p of partitions) {
    if (p.strategy === 'none') continue;
    searched++;
    strategy = strategy === '' || strategy === p.strategy ? p.strategy : 'mixed';
    if (p.estimated_recall === null) unknown = true;
    else recallRows += p.estimated_recall * p.rows;
    rows += p.rows;
  }
  return {
    strategy: strategy || 'none',
    candidates_scored: partitions.reduce((s, p) => s + p.candidates_scored, 0),
    partitions_searched: searched,
    isa: all[0]?.isa ?? native.activeIsa(),
    partitions,
    estimated_recall: unknown || rows === 0 ? null : Math.round((1000 * recallRows) / rows) / 1000,
    elapsed_us: elapsedUs,
  };
}

/** The k best of several shards' results (each sorted), their partitions in shard order. */
function mergeShards(results: NativeResult[], k: number, distinct: boolean): NativeResult {
  if (results.length === 1) return results[0];
  const all: { id: number; score: number }[] = [];
  for (const r of results) for (let i = 0; i < r.ids.length; i++) all.push({ id: r.ids[i], score: r.scores[i] });
  all.sort((a, b) => a.score - b.score || a.id - b.id);
  const seen = new Set<number>();
  const top = distinct ? all.filter((h) => !seen.has(h.id) && seen.add(h.id)).slice(0, k) : all.slice(0, k);
  return {
    ids: Float64Array.from(top, (h) => h.id),
    scores: Float32Array.from(top, (h) => h.score),
    partitions: results.flatMap((r) => r.partitions),
    isa: results[0].isa,
  };
}

export function getVector(core: DatasetCore, id: number): Float32Array | undefined {
  const bytes = core.storage.vectors.get([core.uid, id]);
  return bytes ? bytesToFloat32(bytes) : undefined;
}

export function getMetadata(core: DatasetCore, id: number): Metadata | undefined {
  if (!core.storage.vectors.doesExist([core.uid, id])) return undefined;
  return core.storage.meta.get([core.uid, id]) ?? {};
}
