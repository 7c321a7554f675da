/**
 * `sable tune`: the recall / latency trade-off of a dataset, measured on the running service
 * over its HTTP API: queries sampled from the data (or a file), exact answers from an exhaustive
 * search, nprobe swept under a closed loop of clients; a table, a plot, and, with a p99 target,
 * the SLA that meets it at the highest recall.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SableClient } from '../../client/client.js';
import type { Sla } from '../../client/types.js';
import { choose } from './choice.js';
import { plot } from './plot.js';
import { readQueries, sampleQueries } from './queries.js';
import { markdown, type TuneResult } from './report.js';
import { exactAnswers, measure, nprobeLadder, type SweepPlan } from './sweep.js';

export interface TuneOptions {
  url: string;
  apiKey: string;
  dataset: string;
  queriesFile?: string;
  sample: number;
  k: number;
  concurrency: number;
  requests: number;
  nprobes?: number[];
  outDir: string;
  /** The engine's search p99 to meet, µs. */
  targetP99Us?: number;
  apply: boolean;
  seed: number;
}

export async function tune(o: TuneOptions, log: (line: string) => void): Promise<{ result: TuneResult; files: string[] }> {
  const api = new SableClient({ baseUrl: o.url, apiKey: o.apiKey });
  const dataset = await api.getDataset(o.dataset);
  if (dataset.index_type === 'flat') throw new Error('a flat index searches every row exactly: there is no knob to tune');
  if (dataset.index_type === 'hnsw') throw new Error("an hnsw index's beam width is not a per-search setting of the HTTP API: sable tune sweeps nprobe (the sable and ivf indexes)");
  const { vector_count: vectors } = await api.stats(o.dataset);
  const nlist = dataset.tuning.nlist;
  if (nlist < 1) throw new Error(`dataset ${o.dataset} has no built index yet (GET /datasets/${o.dataset}/index): nothing to sweep`);
  const queries = o.queriesFile ? readQueries(o.queriesFile, dataset.dim) : await sampleQueries(api, o.dataset, dataset.dim, o.sample, o.seed);
  if (queries.length === 0) throw new Error(`dataset ${o.dataset} gave no vectors to sample queries from`);
  log(`${queries.length} queries; exact answers from an exhaustive search`);
  const plan: SweepPlan = { dataset: o.dataset, queries, k: o.k, concurrency: o.concurrency, requests: o.requests };
  const truth = await exactAnswers(api, plan);
  const results = [];
  for (const nprobe of [null, ...(o.nprobes ?? nprobeLadder(nlist))]) {
    const r = await measure(api, plan, { nprobe }, truth);
    log(`nprobe ${nprobe ?? 'default'}: recall@${o.k} ${r.recall.toFixed(3)}, search p99 ${Math.round(r.searchP99Us)} µs, request p99 ${r.requestP99Ms.toFixed(2)} ms`);
    results.push(r);
  }
  const choice = o.targetP99Us === undefined ? null : choose(results, o.targetP99Us, nlist, await api.call<Sla>('GET', `/datasets/${encodeURIComponent(o.dataset)}/sla`));
  let applied = false;
  if (o.apply && choice?.sla) {
    await api.call('PUT', `/datasets/${encodeURIComponent(o.dataset)}/sla`, { body: choice.sla });
    applied = true;
  }
  const result: TuneResult = {
    dataset,
    vectors,
    queries: { count: queries.length, source: o.queriesFile ? 'file' : 'sampled' },
    k: o.k,
    concurrency: o.concurrency,
    requestsPerSetting: o.requests,
    results,
    choice,
    applied,
    startedAt: new Date().toISOString(),
  };
  mkdirSync(o.outDir, { recursive: true });
  const stem = join(o.outDir, `tune-${o.dataset}`);
  writeFileSync(`${stem}.json`, JSON.stringify(result, null, 1) + '\n');
  writeFileSync(`${stem}.svg`, plot(result, o.targetP99Us));
  writeFileSync(`${stem}.md`, markdown(result, `tune-${o.dataset}.svg`));
  return { result, files: [`${stem}.md`, `${stem}.svg`, `${stem}.json`] };
}
