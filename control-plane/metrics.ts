/**
 * Prometheus text metrics: requests and latency by route and status, searches, embeddings,
 * vectors, jobs by kind and status, schedules, and where ingestion's time goes by stage.
 */
const BUCKETS_MS = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

/** One route and method: answers by status and the latency histogram. */
interface Series {
  byStatus: Map<number, number>;
  latency: Histogram;
}

export class Metrics {
  /** By route pattern, then method. Label strings are made when /metrics is read, not per request. */
  private readonly series = new Map<string, Map<string, Series>>();
  private searches = 0;
  /** Texts embedded, by provider and whether the query cache answered. */
  private readonly embedded = new Map<string, number>();

  observeRequest(method: string, route: string, status: number, ms: number): void {
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) byMethod.set(method, (series = { byStatus: new Map(), latency: { counts: new Array(BUCKETS_MS.length).fill(0), sum: 0, count: 0 } }));
    series.byStatus.set(status, (series.byStatus.get(status) ?? 0) + 1);
    const h = series.latency;
    for (let i = BUCKETS_MS.length - 1; i >= 0 && ms <= BUCKETS_MS[i]!; i--) h.counts[i]++;
    h.sum += ms / 1000;
    h.count++;
  }

  observeSearch(): void {
    this.searches++;
  }

  observeEmbedding(provider: string, texts: number, cached: boolean): void {
    const key = `provider="${escape(provider)}",cached="${cached}"`;
    this.embedded.set(key, (this.embedded.get(key) ?? 0) + texts);
  }

  /** Seconds spent and items handled per ingestion stage (fetch, parse, chunk, embed, index). */
  private readonly stages = new Map<string, { seconds: number; items: number }>();

  observeStage(stage: string, ms: number, items: number): void {
    const s = this.stages.get(stage) ?? this.stages.set(stage, { seconds: 0, items: 0 }).get(stage)!;
    s.seconds += ms / 1000;
    s.items += items;
  }

  render(now: MetricsSnapshot): string {
    const lines: string[] = [];
    lines.push('# HELP sable_http_requests_total HTTP requests by route and status.', '# TYPE sable_http_requests_total counter');
    const all = [...this.series].flatMap(([route, byMethod]) => [...byMethod].map(([method, series]) => ({ k: `method="${method}",route="${escape(route)}"`, series })));
    for (const { k, series } of all) for (const [status, v] of series.byStatus) lines.push(`sable_http_requests_total{${k},status="${status}"} ${v}`);
    lines.push('# HELP sable_http_request_duration_seconds HTTP request latency.', '# TYPE sable_http_request_duration_seconds histogram');
    for (const { k, series } of all) {
      const h = series.latency;
      BUCKETS_MS.forEach((b, i) => lines.push(`sable_http_request_duration_seconds_bucket{${k},le="${b / 1000}"} ${h.counts[i]}`));
      lines.push(`sable_http_request_duration_seconds_bucket{${k},le="+Inf"} ${h.count}`);
      lines.push(`sable_http_request_duration_seconds_sum{${k}} ${h.sum}`);
      lines.push(`sable_http_request_duration_seconds_count{${k}} ${h.count}`);
    }
    lines.push('# HELP sable_info The running service: its HTTP adapter and Node.js version.', '# TYPE sable_info gauge');
    lines.push(`sable_info{adapter="${escape(now.adapter)}",node="${process.version}"} 1`);
    lines.push('# HELP sable_searches_total Searches answered.', '# TYPE sable_searches_total counter', `sable_searches_total ${this.searches}`);
    lines.push('# HELP sable_embedded_texts_total Texts embedded, by provider; cached="true": answered by the query cache.', '# TYPE sable_embedded_texts_total counter');
    for (const [k, v] of this.embedded) lines.push(`sable_embedded_texts_total{${k}} ${v}`);
    lines.push('# HELP sable_dataset_vectors Live vectors per dataset.', '# TYPE sable_dataset_vectors gauge');
    for (const [id, n] of now.vectors) lines.push(`sable_dataset_vectors{dataset="${escape(id)}"} ${n}`);
    lines.push('# HELP sable_jobs Jobs in the store, by kind and status.', '# TYPE sable_jobs gauge');
    for (const j of now.jobs) lines.push(`sable_jobs{kind="${j.kind}",status="${j.status}"} ${j.count}`);
    lines.push('# HELP sable_schedules Schedules, by whether they are enabled.', '# TYPE sable_schedules gauge');
    lines.push(`sable_schedules{enabled="true"} ${now.schedules.enabled}`, `sable_schedules{enabled="false"} ${now.schedules.total - now.schedules.enabled}`);
    lines.push('# HELP sable_schedule_runs_total Schedule firings; outcome="skipped_busy": the last run was still in flight.', '# TYPE sable_schedule_runs_total counter');
    lines.push(`sable_schedule_runs_total{outcome="started"} ${now.schedules.fired}`, `sable_schedule_runs_total{outcome="skipped_busy"} ${now.schedules.skippedBusy}`);
    lines.push('# HELP sable_ingest_stage_seconds_total Time spent in each ingestion stage.', '# TYPE sable_ingest_stage_seconds_total counter');
    for (const [k, v] of this.stages) lines.push(`sable_ingest_stage_seconds_total{stage="${k}"} ${v.seconds}`);
    lines.push('# HELP sable_ingest_stage_items_total Items through each ingestion stage (files fetched and parsed, chunks made, embedded and indexed).', '# TYPE sable_ingest_stage_items_total counter');
    for (const [k, v] of this.stages) lines.push(`sable_ingest_stage_items_total{stage="${k}"} ${v.items}`);
    return lines.join('\n') + '\n';
  }
}

/** What /metrics reads from the stores at the time of the scrape. */
export interface MetricsSnapshot {
  /** The HTTP adapter serving: 'uWebSockets.js' or 'node:http'. */
  adapter: string;
  vectors: [string, number][];
  jobs: { kind: string; status: string; count: number }[];
  schedules: { total: number; enabled: number; fired: number; skippedBusy: number };
}

function escape(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}
