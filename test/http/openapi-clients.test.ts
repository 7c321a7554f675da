// The OpenAPI document as integrators' tools read it (issue 28): it validates in a maintained
// parser (@readme/openapi-parser), lints under Redocly's recommended rules with only the warnings
// listed below, declares every query and header parameter with its type, and a client generated
// from it (openapi-typescript + openapi-fetch) compiles under `tsc --strict` and talks to the
// service: typed query parameters, typed bodies, the JSON answer of a question.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

const ROOT = join(__dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * Redocly warnings the document keeps, each for a reason: the three operational routes answer no
 * 4XX at all; the per-type source configs are published as components (GET
 * /ingestion/source-types/{type} answers the same schemas), while the body of POST
 * /ingestion/sources inlines them, as generators read a `default` in a component as "always there"
 * and would make every defaulted config field required.
 */
const ALLOWED_WARNINGS = [
  /^operation-4xx-response #\/paths\/~1(healthz|metrics|openapi\.json)\/get\/responses$/,
  /^no-unused-components #\/components\/schemas\/SourceConfig_\w+$/,
];

describe('the OpenAPI document in the tools clients use', () => {
  let dir: string;
  let work: string;
  let svc: Service;
  let doc: any;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-openapi-clients-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir }, {}));
    doc = await (await fetch(svc.url + '/openapi.json')).json();
    work = mkdtempSync(join(tmpdir(), 'sable-typed-client-'));
    // The generated client resolves openapi-fetch (and tsc its types) from the project's packages.
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('validates in @readme/openapi-parser', async () => {
    const result = await validate(structuredClone(doc));
    expect(result.valid, JSON.stringify(result)).toBe(true);
  });

  it("lints under Redocly's recommended rules: no error, only the warnings justified above", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const found = problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`);
    expect(problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(found.filter((f) => !ALLOWED_WARNINGS.some((re) => re.test(f)))).toEqual([]);
  });

  it('names every operation and declares its query and header parameters with their types', () => {
    const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters.find((p: { name: string }) => p.name === name);
    expect(param('/datasets', 'get', 'limit')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } });
    expect(param('/datasets/{datasetId}/documents', 'get', 'cursor')).toMatchObject({ in: 'query', schema: { type: 'string' } });
    expect(param('/ingestion/jobs/{jobId}/files', 'get', 'status').schema.enum).toContain('failed');
    expect(param('/intelligence/runs/{runId}/events', 'get', 'after')).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 0 } });
    expect(param('/intelligence/runs/{runId}/events', 'get', 'Last-Event-ID')).toMatchObject({ in: 'header', schema: { type: 'integer' } });
    expect(param('/ingestion/sources/{sourceId}', 'delete', 'force')).toMatchObject({ in: 'query', schema: { type: 'boolean', default: false } });
    // Answers: named schemas, the 4XX codes of the route, Retry-After where a retry is asked.
    const search = doc.paths['/datasets/{datasetId}/search'].post;
    expect(search.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/SearchResponse' });
    expect(search.requestBody.content['application/json'].schema.properties.top_k).toBeDefined();
    expect(search.responses['404'].description).toBe('dataset_not_found');
    expect(search.responses['503'].headers['Retry-After']).toBeDefined();
    expect(doc.paths['/intelligence/query'].post.responses['200'].content).toHaveProperty(['text/event-stream']);
    const events = doc.paths['/intelligence/runs/{runId}/events'].get;
    expect(Object.keys(events.responses['200'].content).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(events.responses['204']).toBeDefined();
    expect(events.security).toEqual([{ apiKey: [] }, { streamToken: [] }]);
    expect(doc.servers).toEqual([{ url: svc.url, description: 'this service' }]);
  });

  it('a generated client compiles under tsc --strict and works; a wrong query type does not compile', async () => {
    writeFileSync(join(work, 'api.d.ts'), astToString(await openapiTS(doc)));
    writeFileSync(join(work, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(work, 'client.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
// JSON answers only: the routes that also stream (SSE) would add their event to the answer's type.
const api = createClient<paths, 'application/json'>({ baseUrl: process.argv[2], headers: { 'x-api-key': process.argv[3] } });
const created = await api.POST('/datasets', { body: { name: 'typed', dim: 2, metric: 'l2' } });
const id = created.data!.id;
await api.POST('/datasets/{datasetId}/ensure-engine', { params: { path: { datasetId: id } } });
await api.POST('/datasets/{datasetId}/insert', { params: { path: { datasetId: id } }, body: { vectors: [{ id: 1, values: [1, 0], metadata: { text: 'one' } }, { id: 'two', values: [0, 1] }] } });
const found = await api.POST('/datasets/{datasetId}/search', { params: { path: { datasetId: id } }, body: { query: [1, 0.1], top_k: 1 } });
const page = await api.GET('/datasets', { params: { query: { limit: 1, offset: 0 } } });
const refused = await api.GET('/datasets', { params: { query: { limit: 500 } } });
const answer = await api.POST('/intelligence/query', { body: { query: 'what is one?', dataset_ids: [id], stream: false } });
const run = answer.data!.metadata.run_id as string;
const events = await api.GET('/intelligence/runs/{runId}/events', { params: { path: { runId: run }, query: { after: 1 } } });
const source = await api.POST('/ingestion/sources', { body: { source_type: 'web', name: 'site', config: { start_urls: ['https://docs.example.com/'] } } });
const error: string | undefined = refused.error?.error;
console.log(JSON.stringify({ top: found.data!.results[0].id, listed: page.data!.datasets.length, total: page.data!.total, refused: refused.response.status, error, events: events.data!.events.length > 0, status: events.data!.status, maxDepth: source.data!.config.max_depth }));
`,
    );
    writeFileSync(
      join(work, 'bad.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
const api = createClient<paths>({ baseUrl: 'http://x' });
await api.GET('/datasets', { params: { query: { limit: 'ten' } } });
await api.POST('/ingestion/sources', { body: { source_type: 'web', name: 'w', config: { start_urls: ['https://x'], max_depth: 'deep' } } });
await api.POST('/datasets/{datasetId}/insert', { params: { path: { datasetId: 'd' } }, body: { vectors: [{ id: 1, values: 'not numbers' }] } });
`,
    );
    const tsc = (file: string, emit: boolean) =>
      execFileSync(process.execPath, [TSC, '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', ...(emit ? ['--outDir', join(work, 'out')] : ['--noEmit']), join(work, file)], { cwd: work, encoding: 'utf8' });
    tsc('client.ts', true);
    let refusedType = '';
    try {
      tsc('bad.ts', false);
    } catch (e) {
      refusedType = String((e as { stdout?: string }).stdout);
    }
    expect(refusedType).toMatch(/bad\.ts\(4,\d+\): error TS2322/);
    expect(refusedType).toMatch(/bad\.ts\(5,\d+\): error TS2322/);
    expect(refusedType).toMatch(/bad\.ts\(6,\d+\): error TS2322/);
    // Asynchronously: the service answers from this very process.
    const { stdout: out } = await promisify(execFile)(process.execPath, [join(work, 'out', 'client.js'), svc.url, svc.createdAdminKey!], { cwd: work, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out)).toEqual({ top: 1, listed: 1, total: 1, refused: 400, error: 'invalid_request', events: true, status: 'succeeded', maxDepth: 3 });
  }, 60_000);
});
