// A client for the ingestion API of one running service: create a dataset and a file_upload
// source, upload files through presigned URLs, wait for the job, read documents and search.
import { expect } from 'vitest';
import { waitForJob } from './jobs.js';

export interface FileToSend {
  name: string;
  type: string;
  bytes: Uint8Array | string;
}

export function ingestClient(url: () => string, key: () => string) {
  const call = async (method: string, path: string, body?: unknown, as = key()) => {
    const res = await fetch(url() + path, {
      method,
      redirect: 'manual',
      headers: { 'x-api-key': as, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const job = (jobId: string) => waitForJob(async () => (await call('GET', `/ingestion/jobs/${jobId}`)).body, `job ${jobId}`);
  const api = {
    call,
    job,
    async dataset(name: string, extra: Record<string, unknown> = {}): Promise<string> {
      const ds = await call('POST', '/datasets', { name, ...extra });
      expect(ds.status, JSON.stringify(ds.body)).toBe(201);
      await call('POST', `/datasets/${ds.body.id}/ensure-engine`);
      return ds.body.id;
    },
    async source(name: string, config: Record<string, unknown> = {}): Promise<string> {
      const s = await call('POST', '/ingestion/sources', { source_type: 'file_upload', name, config });
      expect(s.status, JSON.stringify(s.body)).toBe(201);
      return s.body.id;
    },
    /** init, PUT each file to its URL, complete; resolves with the job id (not waiting for it). */
    async send(sourceId: string, datasetId: string, files: FileToSend[]): Promise<string> {
      const bytes = files.map((f) => (typeof f.bytes === 'string' ? new TextEncoder().encode(f.bytes) : f.bytes));
      const init = await call('POST', `/ingestion/sources/${sourceId}/upload/init`, {
        dataset_id: datasetId,
        files: files.map((f, i) => ({ name: f.name, size_bytes: Math.max(1, bytes[i].byteLength), content_type: f.type })),
      });
      expect(init.status, JSON.stringify(init.body)).toBe(200);
      for (const [i, u] of init.body.uploads.entries()) {
        const put = await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': files[i].type }, body: bytes[i] });
        expect(put.status, await put.text()).toBe(200);
      }
      const done = await call('POST', `/ingestion/sources/${sourceId}/upload/complete`, { job_id: init.body.job_id, file_ids: init.body.uploads.map((u: { file_id: string }) => u.file_id) });
      expect(done.body).toEqual({ confirmed: files.length, job_id: init.body.job_id });
      return init.body.job_id;
    },
    async upload(sourceId: string, datasetId: string, files: FileToSend[]) {
      return job(await api.send(sourceId, datasetId, files));
    },
    async files(jobId: string, query = '') {
      return (await call('GET', `/ingestion/jobs/${jobId}/files?limit=200${query}`)).body;
    },
    /** Every document of the dataset, following next_cursor. */
    async documents(datasetId: string, query = ''): Promise<any[]> {
      const out: any[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { documents: any[]; next_cursor: string | null } } = await call('GET', `/datasets/${datasetId}/documents?limit=200${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        out.push(...page.body.documents);
        cursor = page.body.next_cursor;
      } while (cursor);
      return out;
    },
    async search(datasetId: string, text: string, extra: Record<string, unknown> = {}) {
      const r = await call('POST', `/datasets/${datasetId}/search`, { query_text: text, top_k: 5, include_documents: true, ...extra });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.results as { id: number; score: number; doc_value?: string; metadata: Record<string, unknown> }[];
    },
    async count(datasetId: string): Promise<number> {
      return (await call('GET', `/datasets/${datasetId}/stats`)).body.vector_count;
    },
  };
  return api;
}
