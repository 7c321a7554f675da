/**
 * Coalesces the single-shard searches that arrive in one turn of the event loop into native batch
 * searches: one task on the libuv pool per chunk of queries instead of one per query. Each task
 * wakes a pool thread and its completion wakes the HTTP thread; per query, those wake-ups cost
 * the service about as much CPU as its HTTP work (bench/results/http.md, the perf profile).
 * A query waits at most until the event loop's check phase: at concurrency 1 it runs alone, at
 * once; under load the requests of one poll phase share their tasks.
 */
import { batchResult, native, type NativeBatch, type NativeQueryOptions, type NativeResult } from '../native.js';
import type { ShardRunner } from '../types.js';

/** Queries per task from which a turn's batch is split over the pool threads. */
const SPLIT_FROM = 16;

interface Waiting {
  query: Float32Array;
  resolve: (r: NativeResult) => void;
  reject: (e: unknown) => void;
}

interface Group {
  handles: number[];
  options: NativeQueryOptions;
  waiting: Waiting[];
}

export class SearchBatcher {
  private groups = new Map<string, Group>();
  private scheduled = false;
  private readonly flushNow = () => this.flush();

  /** @param tasks pool tasks a batch is split over (the search threads). */
  constructor(private readonly tasks: number) {}

  search(handles: number[], query: Float32Array, options: NativeQueryOptions): Promise<NativeResult> {
    // Queries share a batch only with the same segments, knobs and filter.
    const key = batchKey(handles, options);
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { handles, options, waiting: [] }));
    const p = new Promise<NativeResult>((resolve, reject) => group.waiting.push({ query, resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushNow);
    }
    return p;
  }

  private flush(): void {
    this.scheduled = false;
    const groups = this.groups;
    this.groups = new Map();
    for (const g of groups.values()) {
      // One task per turn keeps the wake-ups few; under load the next turn's task runs on the
      // other pool thread meanwhile. A large batch is split so its own latency uses every thread.
      const n = g.waiting.length;
      const chunks = Math.min(this.tasks, Math.ceil(n / SPLIT_FROM));
      const size = Math.ceil(n / chunks);
      for (let from = 0; from < n; from += size) this.run(g, g.waiting.slice(from, from + size));
    }
  }

  private run(g: Group, waiting: Waiting[]): void {
    const dim = waiting[0]!.query.length;
    const queries = new Float32Array(dim * waiting.length);
    for (let i = 0; i < waiting.length; i++) queries.set(waiting[i]!.query, i * dim);
    let pending: Promise<NativeBatch>;
    try {
      pending = native.searchBatch(g.handles, queries, g.options, 1);
    } catch (e) {
      // The binding refuses some options before it starts (a knob out of its range): thrown
      // from this check-phase callback it would end the process, so these queries fail instead.
      for (const w of waiting) w.reject(e);
      return;
    }
    pending.then(
      (batch) => {
        for (let i = 0; i < waiting.length; i++) waiting[i]!.resolve(batchResult(batch, i, g.handles.length));
      },
      (e: unknown) => {
        for (const w of waiting) w.reject(e);
      },
    );
  }
}

/** One batcher per runner: the single-shard searches of all datasets share its turns. */
const batchers = new WeakMap<ShardRunner, SearchBatcher>();

/**
 * Searches a plan's segments with a runner: one shard (the common case) on the libuv pool, in the
 * batch of its event-loop turn, because the runner's thread hop (structured clones and a message
 * port round trip) measured about 115 us of CPU per query, as much as the search itself
 * (bench/results/http.md); several shards in parallel on the runner's threads.
 */
export function runShards(runner: ShardRunner, handles: number[], query: Float32Array, options: NativeQueryOptions): Promise<NativeResult[]> {
  const per = runner.partitionsPerShard;
  if (handles.length <= per) {
    let batcher = batchers.get(runner);
    if (!batcher) batchers.set(runner, (batcher = new SearchBatcher(runner.threads)));
    return batcher.search(handles, query, options).then((r) => [r]);
  }
  const shards: Promise<NativeResult>[] = [];
  for (let i = 0; i < handles.length; i += per) shards.push(runner.runShard(handles.slice(i, i + per), query, options));
  return Promise.all(shards);
}

/**
 * A key per (segments, knobs, filter): searches of one filter share a batch too (a dashboard's
 * or an application's filter repeats), so an unindexed partition is scanned and the filter
 * evaluated once for all of them.
 */
function batchKey(handles: number[], o: NativeQueryOptions): string {
  const filter = o.predicates && o.predicates.length > 0 ? JSON.stringify(o.predicates) : '';
  return `${handles.join(',')}|${o.k}|${o.nprobe ?? ''}|${o.beamWidth ?? ''}|${o.rerankDepth ?? ''}|${o.exact ? 1 : 0}|${o.distinct ? 1 : 0}|${filter}`;
}
