/** The few calls of the HTTP API the tuning harness makes, with the service's errors as thrown messages. */

export interface DatasetFacts {
  id: string;
  name: string;
  dim: number;
  metric: string;
  index_type: string;
  tuning: { nlist: number; nprobe_min: number; nprobe_max: number };
}

export interface SlaState {
  target_p99_us: number;
  min_nprobe: number;
  max_nprobe_fraction: number;
  min_beam_width: number;
  max_beam_width: number;
  observed_p99_us: number | null;
  current_nprobe: number | null;
}

export interface SearchHit {
  id: number | string;
  score: number;
  embedding?: number[];
}

export interface SearchAnswer {
  results: SearchHit[];
  receipt: { strategy: string; elapsed_us: number; estimated_recall: number | null } | null;
}

export class ServiceApi {
  constructor(
    private readonly base: string,
    private readonly key: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.base.replace(/\/$/, '') + path, {
      method,
      headers: { 'x-api-key': this.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as T & { error?: string; message?: string }) : (null as T);
    if (!res.ok) {
      const e = parsed as { error?: string; message?: string } | null;
      throw new Error(`${method} ${path}: ${res.status} ${e?.error ?? ''} ${e?.message ?? text}`.trim());
    }
    return parsed;
  }

  dataset(id: string): Promise<DatasetFacts> {
    return this.call('GET', `/datasets/${encodeURIComponent(id)}`);
  }

  stats(id: string): Promise<{ vector_count: number }> {
    return this.call('GET', `/datasets/${encodeURIComponent(id)}/stats`);
  }

  sla(id: string): Promise<SlaState> {
    return this.call('GET', `/datasets/${encodeURIComponent(id)}/sla`);
  }

  setSla(id: string, sla: Partial<SlaState>): Promise<SlaState> {
    return this.call('PUT', `/datasets/${encodeURIComponent(id)}/sla`, sla);
  }

  search(id: string, body: Record<string, unknown>): Promise<SearchAnswer> {
    return this.call('POST', `/datasets/${encodeURIComponent(id)}/search`, { include_metadata: false, ...body });
  }
}
