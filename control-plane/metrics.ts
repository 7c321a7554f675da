/** Prometheus text metrics: requests and latency by route and status, searches, embeddings, vectors. */
const BUCKETS_MS = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly latency = new Map<string, Histogram>();
  private searches = 0;
  /** Texts embedded, by provider and whether the query cache answered. */
  private readonly embedded = new Map<string, number>();

  observeRequest(method: string, route: string, status: number, ms: number): void {
    const key = `method="${method}",route="${escape(route)}",status="${status}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const lkey = `method="${method}",route="${escape(route)}"`;
    let h = this.latency.get(lkey);
    if (!h) this.latency.set(lkey, (h = { counts: new Array(BUCKETS_MS.length).fill(0), sum: 0, count: 0 }));
    for (let i = 0; i < BUCKETS_MS.length; i++) if (ms <= BUCKETS_MS[i]) h.counts[i]++;
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

  render(vectorsByDataset: [string, number][]): string {
    const lines: string[] = [];
    lines.push('# HELP sable_http_requests_total HTTP requests by route and status.', '# TYPE sable_http_requests_total counter');
    for (const [k, v] of this.requests) lines.push(`sable_http_requests_total{${k}} ${v}`);
    lines.push('# HELP sable_http_request_duration_seconds HTTP request latency.', '# TYPE sable_http_request_duration_seconds histogram');
    for (const [k, h] of this.latency) {
      BUCKETS_MS.forEach((b, i) => lines.push(`sable_http_request_duration_seconds_bucket{${k},le="${b / 1000}"} ${h.counts[i]}`));
      lines.push(`sable_http_request_duration_seconds_bucket{${k},le="+Inf"} ${h.count}`);
      lines.push(`sable_http_request_duration_seconds_sum{${k}} ${h.sum}`);
      lines.push(`sable_http_request_duration_seconds_count{${k}} ${h.count}`);
    }
    lines.push('# HELP sable_searches_total Searches answered.', '# TYPE sable_searches_total counter', `sable_searches_total ${this.searches}`);
    lines.push('# HELP sable_embedded_texts_total Texts embedded, by provider; cached="true": answered by the query cache.', '# TYPE sable_embedded_texts_total counter');
    for (const [k, v] of this.embedded) lines.push(`sable_embedded_texts_total{${k}} ${v}`);
    lines.push('# HELP sable_dataset_vectors Live vectors per dataset.', '# TYPE sable_dataset_vectors gauge');
    for (const [id, n] of vectorsByDataset) lines.push(`sable_dataset_vectors{dataset="${escape(id)}"} ${n}`);
    return lines.join('\n') + '\n';
  }
}

function escape(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}
