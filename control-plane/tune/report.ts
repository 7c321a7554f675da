/** A tuning run as a user reads it: markdown (the table and the choice) and the data as JSON. */
import type { Choice } from './choice.js';
import type { Dataset } from '../../client/types.js';
import type { SettingResult } from './sweep.js';

export interface TuneResult {
  dataset: Dataset;
  vectors: number;
  queries: { count: number; source: 'sampled' | 'file' };
  k: number;
  concurrency: number;
  requestsPerSetting: number;
  results: SettingResult[];
  choice: Choice | null;
  applied: boolean;
  startedAt: string;
}

export function markdown(r: TuneResult, svgName: string): string {
  const d = r.dataset;
  const rows = r.results.map((s) =>
    [
      s.nprobe === null ? `engine's choice (default${r.choice?.chosen === s ? ', chosen' : ''})` : `${s.nprobe}${r.choice?.chosen === s ? ' (chosen)' : ''}`,
      s.recall.toFixed(3),
      Math.round(s.searchP50Us),
      Math.round(s.searchP99Us),
      s.requestP50Ms.toFixed(2),
      s.requestP99Ms.toFixed(2),
      Math.round(s.qps),
      s.errors,
    ].join(' | '),
  );
  return [
    `# sable tune: ${d.name} (${d.id})`,
    '',
    `- ${r.vectors} vectors × ${d.dim}, ${d.metric}, index ${d.index_type} with ${d.tuning.nlist} lists; run ${r.startedAt}`,
    `- ${r.queries.count} queries ${r.queries.source === 'sampled' ? "sampled from the dataset (each query's own row left out of its answers)" : 'from a file'}`,
    `- recall@${r.k} against an exhaustive search (every list probed, every candidate re-scored exactly)`,
    `- latency: a closed loop of ${r.concurrency} clients, ${r.requestsPerSetting} requests per setting. "search" is the engine's time (the receipt's elapsed_us: what an SLA's target_p99_us holds); "request" the client's, over HTTP`,
    '',
    `| nprobe | recall@${r.k} | search p50 µs | search p99 µs | request p50 ms | request p99 ms | req/s | errors |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((row) => `| ${row} |`),
    '',
    r.choice ? `${r.applied ? 'Applied' : 'Would apply'}: ${r.choice.reason}.${r.choice.sla ? ` SLA: \`${JSON.stringify(r.choice.sla)}\`.` : ''}` : 'No target given (`--apply --target-p99 MS` picks and sets one).',
    '',
    `![recall against p99](${svgName})`,
    '',
  ].join('\n');
}
