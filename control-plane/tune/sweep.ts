/**
 * The knob sweep: every setting's recall@k against an exhaustive search, and its latency under a
 * closed loop of `concurrency` clients, as the client saw it (HTTP included) and as the engine
 * timed the search (the receipt's elapsed_us, the figure an SLA's p99 target is held to).
 */
import { performance } from 'node:perf_hooks';
import type { TuneQuery } from './queries.js';
import type { SableClient } from '../../client/client.js';
import { nearestRank } from '../../engine/index.js';
import type { SearchAnswer, SearchRequest } from '../../client/types.js';

/** nprobe null: the engine's own choice (the index default, or the SLA tuner's). */
export interface Setting {
  nprobe: number | null;
}

export interface SettingResult {
  nprobe: number | null;
  recall: number;
  requests: number;
  errors: number;
  qps: number;
  requestP50Ms: number;
  requestP99Ms: number;
  searchP50Us: number;
  searchP99Us: number;
}

/** Every probe list scanned and every candidate re-scored exactly: the exact top-k. */
const EXHAUSTIVE = { nprobe_override: 1_000_000, rerank_depth_override: 1_000_000 };

/** A search of the sweep: the ids only (metadata is not what is measured). */
const ask = (api: SableClient, dataset: string, body: SearchRequest) => api.search(dataset, { include_metadata: false, ...body });

export interface SweepPlan {
  dataset: string;
  queries: TuneQuery[];
  k: number;
  concurrency: number;
  /** Measured requests per setting (the queries cycled). */
  requests: number;
}

export async function exactAnswers(api: SableClient, p: SweepPlan): Promise<string[][]> {
  const out: string[][] = [];
  for (const q of p.queries) out.push(idsOf(await ask(api, p.dataset, { query: q.vector, top_k: p.k + 1, ...EXHAUSTIVE }), q, p.k));
  return out;
}

export async function measure(api: SableClient, p: SweepPlan, setting: Setting, truth: string[][]): Promise<SettingResult> {
  const body = (q: TuneQuery): SearchRequest => ({ query: q.vector, top_k: p.k + 1, ...(setting.nprobe === null ? {} : { nprobe_override: setting.nprobe }) });
  // Recall from one pass over the queries, in order.
  let hits = 0;
  for (let i = 0; i < p.queries.length; i++) {
    const got = new Set(idsOf(await ask(api, p.dataset, body(p.queries[i]!)), p.queries[i]!, p.k));
    hits += truth[i]!.filter((id) => got.has(id)).length;
  }
  const relevant = truth.reduce((s, t) => s + t.length, 0);
  // Latency: a closed loop of `concurrency` clients over `requests` requests, after a warm-up of
  // a fifth as many at the same concurrency (the setting's lists in cache, the loop at speed).
  const requestMs: number[] = [];
  const searchUs: number[] = [];
  let errors = 0;
  const loop = async (requests: number, record: boolean) => {
    let next = 0;
    const client = async () => {
      for (let i = next++; i < requests; i = next++) {
        const q = p.queries[i % p.queries.length]!;
        const start = performance.now();
        try {
          const answer = await ask(api, p.dataset, body(q));
          if (!record) continue;
          requestMs.push(performance.now() - start);
          if (answer.receipt) searchUs.push(answer.receipt.elapsed_us);
        } catch {
          if (record) errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: p.concurrency }, client));
  };
  await loop(Math.ceil(p.requests / 5), false);
  const t0 = performance.now();
  await loop(p.requests, true);
  const seconds = (performance.now() - t0) / 1000;
  return {
    nprobe: setting.nprobe,
    recall: relevant === 0 ? 1 : hits / relevant,
    requests: requestMs.length,
    errors,
    qps: requestMs.length / seconds,
    requestP50Ms: percentile(requestMs, 0.5),
    requestP99Ms: percentile(requestMs, 0.99),
    searchP50Us: percentile(searchUs, 0.5),
    searchP99Us: percentile(searchUs, 0.99),
  };
}

/** The query's answer ids, its own row left out, at most k. */
function idsOf(answer: SearchAnswer, q: TuneQuery, k: number): string[] {
  const own = q.ownId === null ? null : String(q.ownId);
  return answer.results.map((h) => String(h.id)).filter((id) => id !== own).slice(0, k);
}

/** The percentile as the SLA tuner reads it (NaN of no values). */
function percentile(values: number[], q: number): number {
  return values.length === 0 ? NaN : nearestRank([...values].sort((a, b) => a - b), q);
}

/** nprobe 1, 2, 4, ... up to the index's lists (all of them last). */
export function nprobeLadder(nlist: number): number[] {
  const out: number[] = [];
  for (let n = 1; n < nlist; n *= 2) out.push(n);
  if (nlist > 0) out.push(nlist);
  return out;
}
