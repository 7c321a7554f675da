// The OpenAPI document describes the answers of the dataset, vector and job routes, and the
// service's real answers match what it says (validated with ajv against the document itself).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dereference } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { waitForJob } from '../support/jobs.js';

describe('OpenAPI answers', () => {
  let dir: string;
  let svc: Service;
  let key: string;
  let doc: any;
  const ajv = new Ajv({ strict: false, validateFormats: false });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-openapi-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir }, {}));
    key = readFileSync(join(dir, 'admin.key'), 'utf8').trim();
    // Schemas are named components ($ref): resolved here, so ajv gets each answer's whole schema.
    doc = await dereference(await (await fetch(svc.url + '/openapi.json')).json());
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Calls a route and checks its answer against the document's schema for (path, method, status). */
  const checked = async (method: string, path: string, pattern: string, body?: unknown) => {
    const res = await fetch(svc.url + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const op = doc.paths[pattern]?.[method.toLowerCase()];
    expect(op, `${method} ${pattern} is documented`).toBeDefined();
    const answer = op.responses[String(res.status)];
    expect(answer, `${method} ${pattern} documents ${res.status} (${text.slice(0, 200)})`).toBeDefined();
    if (answer.content) {
      const value = JSON.parse(text);
      const validate = ajv.compile(answer.content['application/json'].schema);
      expect(validate(value), `${method} ${pattern}: ${JSON.stringify(validate.errors)}`).toBe(true);
      return value;
    }
    return null;
  };

  it('documents answers of the dataset, vector and job routes, and the service keeps to them', async () => {
    const ds = await checked('POST', '/datasets', '/datasets', { name: 'doc', dim: 3, schema: [{ name: 'year', type: 'int' }] });
    const base = `/datasets/${ds.id}`;
    const b = '/datasets/{datasetId}';
    await checked('POST', `${base}/ensure-engine`, `${b}/ensure-engine`);
    await checked('GET', '/datasets', '/datasets');
    await checked('GET', base, b);
    await checked('POST', `${base}/insert`, `${b}/insert`, { vectors: [{ id: 1, values: [1, 0, 0], metadata: { year: 2024 } }, { id: 'two', values: [0, 1, 0] }] });
    await checked('POST', `${base}/search`, `${b}/search`, { query: [1, 0, 0], top_k: 2, include_embeddings: true, include_documents: true });
    await checked('GET', `${base}/payload/two`, `${b}/payload/{vectorId}`);
    await checked('GET', `${base}/stats`, `${b}/stats`);
    await checked('GET', `${base}/index`, `${b}/index`);
    await checked('POST', `${base}/index/rebuild`, `${b}/index/rebuild`);
    await checked('PATCH', `${base}/schema`, `${b}/schema`, { schema: [{ name: 'lang', type: 'text' }] });
    await checked('GET', `${base}/hybrid`, `${b}/hybrid`);
    await checked('PUT', `${base}/promotion-policy`, `${b}/promotion-policy`, { max_buffer_vectors: 100 });
    await checked('GET', `${base}/sla`, `${b}/sla`);
    await checked('DELETE', `${base}/vectors`, `${b}/vectors`, { ids: [1] });

    const bytes = parquetBytes([{ ids: BigInt64Array.of(5n, 6n), vectors: Float32Array.of(1, 0, 0, 0, 0, 1), dim: 3 }]);
    const PARQUET = 'application/vnd.apache.parquet';
    const init = await checked('POST', `/v1${base}/upload/init`, `${b}/upload/init`, { files: [{ name: 'v.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
    await fetch(init.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': PARQUET }, body: bytes });
    await checked('POST', `/v1${base}/upload/complete`, `${b}/upload/complete`, { job_id: init.job_id, file_ids: [init.uploads[0].file_id] });
    await waitForJob(async () => (await fetch(`${svc.url}/v1/jobs/${init.job_id}`, { headers: { 'x-api-key': key } })).json(), 'the load');
    await checked('GET', `/v1/jobs/${init.job_id}`, '/v1/jobs/{jobId}');
    await checked('GET', `/ingestion/jobs/${init.job_id}`, '/ingestion/jobs/{jobId}');
    await checked('GET', '/ingestion/jobs', '/ingestion/jobs');
    await checked('GET', `/ingestion/jobs/${init.job_id}/files`, '/ingestion/jobs/{jobId}/files');
    await checked('GET', `/ingestion/jobs/${init.job_id}/statistics`, '/ingestion/jobs/{jobId}/statistics');
    await checked('DELETE', base, b);
  });

  it('documents the answers of the intelligence routes (JSON answer, runs, sessions), and the SSE form of the query', async () => {
    const ds = await checked('POST', '/datasets', '/datasets', { name: 'qa' });
    await checked('POST', `/datasets/${ds.id}/ensure-engine`, '/datasets/{datasetId}/ensure-engine');
    await checked('POST', `/datasets/${ds.id}/insert`, '/datasets/{datasetId}/insert', { vectors: [{ id: 'a', metadata: { text: 'The harbour crane lifts twelve containers an hour.', name: 'crane' } }] });
    const session = await checked('POST', '/intelligence/sessions', '/intelligence/sessions', { title: 'doc', dataset_id: ds.id });
    const answer = await checked('POST', '/intelligence/query', '/intelligence/query', { query: 'How many containers does the crane lift?', stream: false, session_id: session.id });
    expect(answer.answer).toContain('twelve');
    const run = answer.metadata.run_id;
    await checked('GET', `/intelligence/runs/${run}`, '/intelligence/runs/{runId}');
    await checked('GET', `/intelligence/runs/${run}/events?after=2`, '/intelligence/runs/{runId}/events');
    await checked('GET', '/intelligence/sessions', '/intelligence/sessions');
    await checked('GET', `/intelligence/sessions/${session.id}`, '/intelligence/sessions/{sessionId}');
    await checked('POST', `/intelligence/sessions/${session.id}/messages`, '/intelligence/sessions/{sessionId}/messages', { role: 'user', content: 'thanks' });
    await checked('GET', `/intelligence/sessions/${session.id}/messages`, '/intelligence/sessions/{sessionId}/messages');
    await checked('GET', `/intelligence/sessions/${session.id}/events`, '/intelligence/sessions/{sessionId}/events');
    await checked('DELETE', `/intelligence/sessions/${session.id}`, '/intelligence/sessions/{sessionId}');
    const sse = doc.paths['/intelligence/query'].post.responses['200'].content['text/event-stream'].schema;
    const res = await fetch(svc.url + '/intelligence/query', { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'crane?' }) });
    const validate = ajv.compile(sse);
    for (const line of (await res.text()).split('\n').filter((l) => l.startsWith('data: '))) {
      expect(validate(JSON.parse(line.slice(6))), line).toBe(true);
    }
  });

  it('lists every error code with its status', () => {
    for (const [code, status] of [['dataset_not_found', 404], ['invalid_request', 400], ['dataset_exists', 409], ['upstream_error', 502]] as const) {
      expect(doc.info.description).toContain(`${code} ${status}`);
    }
  });
});
