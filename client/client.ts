/**
 * A typed client of the Sable HTTP API. Every call carries one X-Request-Id (kept across its
 * retries, so the service's log shows one request); 503 and 429, which mean the service did not
 * do the work, are retried after their Retry-After; errors are thrown as SableApiError with the
 * service's code, message and request id. With `msgpack: true` vectors travel as float32
 * binaries (insert, search). Answers stream as an async iterator that resumes after a drop.
 */
import type { Packr } from 'msgpackr';
import { randomId } from './random-id.js';
import { resumingChunks } from './stream.js';
import type * as T from './types.js';

export interface ClientOptions {
  /** The service, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  apiKey: string;
  /** Retries of a 503 or 429 (default 4). */
  retries?: number;
  /** The longest Retry-After waited for; a longer one is thrown (default 30 s). */
  maxRetryAfterSeconds?: number;
  /** Vectors as float32 binaries in msgpack on insert and search. */
  msgpack?: boolean;
  fetch?: typeof fetch;
}

export class SableApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly body: T.ErrorBody,
  ) {
    super(`${code}: ${message}`);
    this.name = 'SableApiError';
  }
}

interface Call {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send and accept msgpack. */
  msgpack?: boolean;
}

const MSGPACK = 'application/msgpack';
let packr: Promise<Packr> | undefined;

/**
 * The msgpack encoder, loaded at its first use (`msgpack: true`, or an answer in msgpack): the
 * callers that never use it (the dashboard) do not load it, and bundlers that split code put it
 * in a chunk of its own.
 */
function packer(): Promise<Packr> {
  return (packr ??= import('msgpackr').then(({ Packr }) => new Packr({ useRecords: false, int64AsType: 'number' })));
}

/** The (method, path) of every call the client makes: a test checks each against /openapi.json. */
export const OPERATIONS = {
  listDatasets: ['GET', '/datasets'],
  createDataset: ['POST', '/datasets'],
  getDataset: ['GET', '/datasets/{datasetId}'],
  deleteDataset: ['DELETE', '/datasets/{datasetId}'],
  ensureEngine: ['POST', '/datasets/{datasetId}/ensure-engine'],
  stats: ['GET', '/datasets/{datasetId}/stats'],
  insert: ['POST', '/datasets/{datasetId}/insert'],
  search: ['POST', '/datasets/{datasetId}/search'],
  deleteVectors: ['DELETE', '/datasets/{datasetId}/vectors'],
  createSource: ['POST', '/ingestion/sources'],
  uploadInit: ['POST', '/ingestion/sources/{sourceId}/upload/init'],
  uploadComplete: ['POST', '/ingestion/sources/{sourceId}/upload/complete'],
  getJob: ['GET', '/ingestion/jobs/{jobId}'],
  ask: ['POST', '/intelligence/query'],
  getRun: ['GET', '/intelligence/runs/{runId}'],
  runEvents: ['GET', '/intelligence/runs/{runId}/events'],
  streamToken: ['POST', '/intelligence/runs/{runId}/stream-token'],
} as const;

export class SableClient {
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: ClientOptions) {
    // Bound: browsers refuse fetch called as a method of another object ("Illegal invocation").
    this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // Datasets and vectors.
  listDatasets(page: { limit?: number; offset?: number } = {}): Promise<T.DatasetList> {
    return this.call('GET', '/datasets', { query: page });
  }
  createDataset(body: T.CreateDataset): Promise<T.Dataset> {
    return this.call('POST', '/datasets', { body });
  }
  getDataset(id: string): Promise<T.Dataset> {
    return this.call('GET', `/datasets/${enc(id)}`);
  }
  async deleteDataset(id: string): Promise<void> {
    await this.call('DELETE', `/datasets/${enc(id)}`);
  }
  ensureEngine(id: string): Promise<T.Dataset> {
    return this.call('POST', `/datasets/${enc(id)}/ensure-engine`, { body: {} });
  }
  stats(id: string): Promise<T.Stats> {
    return this.call('GET', `/datasets/${enc(id)}/stats`);
  }
  insert(id: string, vectors: T.VectorIn[]): Promise<T.InsertAnswer> {
    if (!this.opts.msgpack) return this.call('POST', `/datasets/${enc(id)}/insert`, { body: { vectors } });
    const packed = vectors.map((v) => (v.values === undefined ? v : { ...v, values: float32(v.values) }));
    return this.call('POST', `/datasets/${enc(id)}/insert`, { body: { vectors: packed }, msgpack: true });
  }
  search(id: string, body: T.SearchRequest): Promise<T.SearchAnswer> {
    if (!this.opts.msgpack || body.query === undefined) return this.call('POST', `/datasets/${enc(id)}/search`, { body });
    return this.call('POST', `/datasets/${enc(id)}/search`, { body: { ...body, query: float32(body.query) }, msgpack: true });
  }
  deleteVectors(id: string, body: T.DeleteVectors): Promise<T.DeleteAnswer> {
    return this.call('DELETE', `/datasets/${enc(id)}/vectors`, { body });
  }

  // Ingestion.
  createSource(body: T.SourceCreate): Promise<T.Source> {
    return this.call('POST', '/ingestion/sources', { body });
  }
  /** Files into a file_upload source: init, one PUT per file to its upload URL, complete. Answers the job. */
  async upload(sourceId: string, datasetId: string, files: { name: string; bytes: Uint8Array; contentType: string }[]): Promise<T.Job> {
    const init: T.SourceUploadAnswer = await this.call('POST', `/ingestion/sources/${enc(sourceId)}/upload/init`, {
      body: { dataset_id: datasetId, files: files.map((f) => ({ name: f.name, size_bytes: f.bytes.byteLength, content_type: f.contentType })) },
    });
    for (const [i, u] of init.uploads.entries()) {
      const res = await this.fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': files[i]!.contentType }, body: files[i]!.bytes as BodyInit });
      if (!res.ok) throw await apiError(res, null);
    }
    await this.call('POST', `/ingestion/sources/${enc(sourceId)}/upload/complete`, { body: { job_id: init.job_id, file_ids: init.uploads.map((u) => u.file_id) } });
    return this.getJob(init.job_id);
  }
  getJob(id: string): Promise<T.Job> {
    return this.call('GET', `/ingestion/jobs/${enc(id)}`);
  }
  /** Polls a job until it completes or fails (or `timeoutMs` passes). */
  async waitForJob(id: string, timeoutMs = 600_000): Promise<T.Job> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const job = await this.getJob(id);
      if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') return job;
      if (Date.now() > until) throw new Error(`job ${id} is still ${job.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  // Questions.
  /** The whole answer as JSON, once the run ends. */
  ask(question: Omit<T.Question, 'stream'>): Promise<T.Answer> {
    return this.call('POST', '/intelligence/query', { body: { ...question, stream: false } });
  }
  /**
   * The answer's chunks as they come (events, text, citation, metadata, done). A dropped
   * connection is resumed after the last chunk received, up to `resumes` times in a row.
   */
  askStream(question: Omit<T.Question, 'stream'>, resumes = 5): AsyncGenerator<T.StreamChunk> {
    const runId = question.run_id ?? randomId();
    const body = { ...question, run_id: runId, stream: true };
    return resumingChunks(
      () => this.open('POST', '/intelligence/query', { body }),
      async (after) => {
        const res = await this.open('GET', `/intelligence/runs/${enc(runId)}/events`, { query: { after }, headers: { accept: 'text/event-stream' } });
        return res.status === 204 ? null : res;
      },
      resumes,
    );
  }
  getRun(runId: string): Promise<T.RunRecord> {
    return this.call('GET', `/intelligence/runs/${enc(runId)}`);
  }
  /** A token a browser EventSource uses to follow one run without the API key. */
  streamToken(runId: string): Promise<T.StreamToken> {
    return this.call('POST', `/intelligence/runs/${enc(runId)}/stream-token`, { body: {} });
  }

  /** Any route: the parsed answer (null for 204), retried and thrown as the calls above. */
  async call<R>(method: string, path: string, c: Call = {}): Promise<R> {
    const res = await this.open(method, path, c);
    if (res.status === 204) return null as R;
    const type = res.headers.get('content-type') ?? '';
    return (type.startsWith(MSGPACK) ? (await packer()).unpack(new Uint8Array(await res.arrayBuffer())) : await res.json()) as R;
  }

  /** The answer of a call that succeeded, after the retries it needed. */
  private async open(method: string, path: string, c: Call): Promise<Response> {
    const url = new URL(path, this.opts.baseUrl);
    for (const [k, v] of Object.entries(c.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const requestId = randomId();
    const headers: Record<string, string> = { 'x-api-key': this.opts.apiKey, 'x-request-id': requestId, ...c.headers };
    let body: BodyInit | undefined;
    if (c.body !== undefined) {
      headers['content-type'] = c.msgpack ? MSGPACK : 'application/json';
      body = c.msgpack ? ((await packer()).pack(c.body) as unknown as BodyInit) : JSON.stringify(c.body);
    }
    if (c.msgpack) headers.accept = MSGPACK;
    const retries = this.opts.retries ?? 4;
    for (let attempt = 0; ; attempt++) {
      const res = await this.fetch(url, { method, headers, body });
      if (res.ok) return res;
      const wait = Number(res.headers.get('retry-after') ?? NaN);
      const retryable = (res.status === 503 || res.status === 429) && attempt < retries && Number.isFinite(wait) && wait <= (this.opts.maxRetryAfterSeconds ?? 30);
      if (!retryable) throw await apiError(res, requestId);
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, Math.max(wait, 0.05) * 1000));
    }
  }
}

async function apiError(res: Response, requestId: string | null): Promise<SableApiError> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  let body: T.ErrorBody;
  try {
    body = (res.headers.get('content-type') ?? '').startsWith(MSGPACK) ? (await packer()).unpack(bytes) : JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    body = { error: 'http_' + res.status, message: new TextDecoder().decode(bytes).slice(0, 200) };
  }
  return new SableApiError(res.status, body.error, body.message, res.headers.get('x-request-id') ?? requestId, body);
}

function float32(values: number[] | Float32Array): Uint8Array {
  const f = values instanceof Float32Array ? values : Float32Array.from(values);
  return new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
}

const enc = encodeURIComponent;
