// The HTTP contract's route tests as one body of tests run against a target (./target.ts):
// test/http/http.test.ts runs them embedded on each adapter, test/cluster/contract-three-nodes.test.ts
// on a three-node cluster whose calls rotate over the nodes. A test that a target cannot run names
// the capability it needs and says why; no assertion depends on the target.
import { readFileSync, statSync } from 'node:fs';
import { pack, unpack } from 'msgpackr';
import { beforeAll, expect, it } from 'vitest';
import { fnv1a53 } from '../../dist/catalog/datasets/ids.js';
import type { Capability, ContractTarget, TargetProfile } from './target.js';

/** Registers the route tests in the calling describe; `t` is read once its beforeAll has run. */
export function contractSuite(profile: TargetProfile, t: () => ContractTarget): void {
  const can = (c: Capability) => profile.can.has(c);
  // Tests skipped here fail on a cluster because of a bug in cluster mode, named in a
  // `// cluster:` comment above each: they are unskipped once it is fixed.
  const onCluster = profile.kind === 'cluster';
  let admin: string;
  let member: string;
  let other: string;

  const callAt = async (url: string, method: string, path: string, key: string | null, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const call = (method: string, path: string, key: string | null, body?: unknown, headers: Record<string, string> = {}) => callAt(t().url(), method, path, key, body, headers);
  const readyDataset = async (body: object) => {
    const created = await call('POST', '/datasets', admin, body);
    expect(created.status).toBe(201);
    await call('POST', `/datasets/${created.body.id}/ensure-engine`, admin);
    await t().settle(created.body.id, admin);
    return created.body;
  };
  /** The dataset's index status once it is ready (bounded). */
  const indexed = async (base: string) => {
    for (let i = 0; i < 500; i++) {
      const s = (await call('GET', `${base}/index`, member)).body;
      if (s.status === 'ready') return s;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the index never became ready');
  };

  beforeAll(async () => {
    admin = t().admin;
    // The CLI works on the target's catalog while the service runs.
    member = (await t().newKey('default', 'member')).key;
    other = (await t().newKey('acme', 'admin')).key;
  });

  // `sable serve` prints where the key is, never the key (test/http/isolation.test.ts reads its output).
  it('first start creates the admin key, written 0600', () => {
    expect(admin).toMatch(/^sable_[0-9a-f]{64}$/);
    expect(readFileSync(t().adminKeyFile, 'utf8').trim()).toBe(admin);
    expect(statSync(t().adminKeyFile).mode & 0o777).toBe(0o600);
  });

  // embedding: a cluster's nodes are processes of their own; no embedding code gets a Service back.
  it.skipIf(!can('embedding'))('the first start hands the admin key to the embedding code, on the adapter asked for', () => {
    const { service } = t().embedded!;
    expect(service.createdAdminKey).toBe(admin);
    expect(service.adapter).toBe(profile.adapter === 'uws' ? 'uWebSockets.js' : 'node:http');
  });

  it('answers 401 without a valid key, 404 under /api/v1, and routes the legacy /v1 prefix', async () => {
    expect((await call('GET', '/datasets', null)).body.error).toBe('unauthorized');
    expect((await call('GET', '/datasets', 'sable_' + '0'.repeat(64))).status).toBe(401);
    expect((await call('GET', '/datasets', 'Bearer x')).status).toBe(401);
    expect((await call('GET', '/api/v1/datasets', admin)).status).toBe(404);
    expect((await call('GET', '/v1/datasets', admin)).status).toBe(200);
    expect((await call('GET', '/nowhere', admin)).body.error).toBe('not_found');
  });

  it('creates, lists, gets and deletes datasets, scoped to the organization', async () => {
    const created = await call('POST', '/datasets', admin, { name: 'scoped', dim: 4 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'scoped', dim: 4, metric: 'cosine', index_type: 'sable', embedding: { provider: 'local', model: 'all-minilm-l6-v2' } });
    const id = created.body.id;
    expect((await call('GET', `/datasets/${id}`, member)).status).toBe(200);
    for (const [m, p, b] of [['GET', `/datasets/${id}`], ['POST', `/datasets/${id}/search`, { query: [1, 0, 0, 0] }],
      ['POST', `/datasets/${id}/insert`, { vectors: [] }], ['DELETE', `/datasets/${id}`]] as const) {
      const r = await call(m, p, other, b);
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.body.error).toBe('dataset_not_found');
    }
    const list = await call('GET', '/datasets?limit=1&offset=0', admin);
    expect(list.body).toMatchObject({ limit: 1, offset: 0 });
    expect(list.body.datasets.length).toBe(1);
    expect((await call('GET', '/datasets?limit=201', admin)).status).toBe(400);
    expect((await call('GET', '/datasets', other)).body.total).toBe(0);
    expect((await call('DELETE', `/datasets/${id}`, admin)).status).toBe(204);
    expect((await call('GET', `/datasets/${id}`, admin)).status).toBe(404);
  });

  it('infers dimensions from the model table and refuses what it cannot infer', async () => {
    expect((await call('POST', '/datasets', admin, { name: 'e-small', embedding: { model: 'text-embedding-3-small' } })).body.dim).toBe(1536);
    expect((await call('POST', '/datasets', admin, { name: 'e-large', embedding: { model: 'text-embedding-3-large' } })).body.dim).toBe(3072);
    expect((await call('POST', '/datasets', admin, { name: 'e-local' })).body.dim).toBe(384);
    expect((await call('POST', '/datasets', admin, { name: 'e', embedding: { provider: 'openai-compatible', model: 'mystery' } })).status).toBe(400);
    const managed = await call('POST', '/datasets', admin, { name: 'e', embedding: { provider: 'managed' } });
    expect(managed.status).toBe(400);
    expect(managed.body.message).toContain('SABLE_MANAGED_EMBEDDINGS_URL');
    expect((await call('POST', '/datasets', admin, { dim: 3 })).status).toBe(400);
    expect((await call('POST', '/datasets', admin, 'not json', { 'content-type': 'application/json' })).body.error).toBe('invalid_request');
    expect((await call('POST', '/datasets', admin, 'x', { 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('dataset names are unique in an organization (409 dataset_exists), not across organizations', async () => {
    const first = await call('POST', '/datasets', admin, { name: 'unique-name', dim: 2 });
    expect(first.status).toBe(201);
    const again = await call('POST', '/datasets', member, { name: 'unique-name', dim: 4 });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'dataset_exists', id: first.body.id });
    expect((await call('POST', '/datasets', other, { name: 'unique-name', dim: 2 })).status).toBe(201);
    expect((await call('DELETE', `/datasets/${first.body.id}`, admin)).status).toBe(204);
    expect((await call('POST', '/datasets', admin, { name: 'unique-name', dim: 2 })).status).toBe(201);
  });

  it('inserts, searches with filters, deletes, and reports string ids', async () => {
    const ds = await readyDataset({ name: 'vecs', dim: 3, metric: 'l2', schema: [{ name: 'year', type: 'long' }] });
    const base = `/datasets/${ds.id}`;
    const ins = await call('POST', `${base}/insert`, member, { vectors: [
      { id: 1, values: [0, 0, 0], metadata: { lang: 'en', year: 2020, text: 'first' } },
      { id: 2, values: [1, 0, 0], metadata: { lang: 'fr', year: 2022, document_storage_key: 's3://secret' } },
      { id: 'doc-x', values: [2, 0, 0], metadata: { lang: 'en', year: 2024 } },
    ] });
    expect(ins.body).toEqual({ inserted: 3, embedded: 0 });
    const s = await call('POST', `${base}/search`, member, { query: [0, 0, 0], top_k: 3 });
    expect(s.status).toBe(200);
    expect(s.body.results.map((r: { id: number }) => r.id)).toEqual([1, 2, fnv1a53('doc-x')]);
    expect(s.body.results[0]).toMatchObject({ score: 0, metadata: { lang: 'en', year: 2020 }, doc_kind: null });
    expect(s.body.results[0].metadata.text).toBeUndefined();
    expect(s.body.results[1].metadata.document_storage_key).toBeUndefined();
    expect(s.body.results[2].external_id).toBe('doc-x');
    expect(typeof s.body.query_time_ms).toBe('number');

    const filtered = await call('POST', `/v1${base}/search`, member, {
      query: [0, 0, 0], filters: { lang: 'en' }, advanced_filters: [{ field: 'year', op: 'gt', value: 2021 }],
      include_documents: true, include_embeddings: true,
    });
    expect(filtered.body.results).toHaveLength(1);
    expect(filtered.body.results[0]).toMatchObject({ external_id: 'doc-x', embedding: [2, 0, 0], doc_kind: null });
    const docs = await call('POST', `${base}/search`, member, { query: [0, 0, 0], top_k: 1, include_documents: true, include_metadata: false });
    expect(docs.body.results[0]).toEqual({ id: 1, score: 0, doc_kind: 'inline', doc_value: 'first' });

    expect((await call('POST', `${base}/search`, member, { query: [0, 0] })).status).toBe(400);
    expect((await call('POST', `${base}/search`, member, { query: [0, 0, 0], query_text: 'x' })).status).toBe(400);
    const mismatch = await call('POST', `${base}/search`, member, { query_text: 'x' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toMatch(/384 dimensions/);
    expect((await call('POST', `${base}/search`, member, { query: [0, 0, 0], advanced_filters: [{ field: 'lang', op: 'gt', value: 'a' }] })).status).toBe(400);
    expect((await call('POST', `${base}/insert`, member, { vectors: [{ id: 9, values: [1, 2] }] })).status).toBe(400);
    expect((await call('POST', `${base}/insert`, member, { vectors: [{ id: 9, values: [1, 2, 3], metadata: { a: { b: 1 } } }] })).status).toBe(400);
    expect((await call('POST', `${base}/insert`, member, { vectors: [{ id: 1.5, values: [1, 2, 3] }] })).status).toBe(400);
    // Nothing stored was lost by the refused requests.
    expect((await call('GET', `${base}/stats`, member)).body).toMatchObject({ vector_count: 3, dim: 3, metric: 'l2', index_type: 'sable' });

    const payload = await call('GET', `${base}/payload/doc-x`, member);
    expect(payload.body).toMatchObject({ id: fnv1a53('doc-x'), external_id: 'doc-x', metadata: { lang: 'en', year: 2024 } });
    expect((await call('GET', `${base}/payload/77`, member)).status).toBe(404);
    const del = await call('DELETE', `${base}/vectors`, member, { ids: ['doc-x', 2, 404], write_concern: 'quorum' });
    expect(del.body).toEqual({ deleted: 2 });
    expect((await call('POST', `${base}/search`, member, { query: [2, 0, 0] })).body.results.map((r: { id: number }) => r.id)).toEqual([1]);
  });

it('a search answers with the receipt of how the engine searched', async () => {
    const ds = await readyDataset({ name: 'receipt', dim: 3, metric: 'l2' });
    const base = `/datasets/${ds.id}`;
    const ins = await call('POST', `${base}/insert`, member, { vectors: [{ id: 1, values: [0, 0, 0] }, { id: 2, values: [1, 0, 0] }, { id: 'doc-x', values: [2, 0, 0] }] });
    expect(ins.body).toEqual({ inserted: 3, embedded: 0 });
    const s = await call('POST', `${base}/search`, member, { query: [0, 0, 0], top_k: 3 });
    expect(s.status).toBe(200);
    expect(s.body.receipt).toMatchObject({ strategy: 'exact', isa: expect.any(String) });
  });

it('schema: admin only, aliases normalised, versions increase, rules enforced, inferred fields promoted', async () => {
    const ds = await readyDataset({ name: 'schema', dim: 2, metadata_schema: [{ name: 'price', type: 'double' }] });
    const base = `/datasets/${ds.id}`;
    expect((await call('GET', base, member)).body).toMatchObject({ schema: [{ name: 'price', type: 'f64', source: 'user' }], schema_version: 1 });
    const denied = await call('PATCH', `${base}/schema`, member, { schema: [{ name: 'n', type: 'int' }] });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('insufficient_role');
    const merged = await call('PATCH', `${base}/schema`, admin, { metadata_fields: [{ name: 'n', type: 'int' }, { name: 'ts', type: 'timestamp' }] });
    expect(merged.body.schema.map((e: { name: string; type: string }) => `${e.name}:${e.type}`)).toEqual(['price:f64', 'n:i32', 'ts:i64']);
    expect(merged.body.schema_version).toBe(2);
    for (const bad of [
      { schema: [{ name: '', type: 'int' }] }, { schema: [{ name: 'a', type: 'int' }, { name: 'a', type: 'str' }] },
      { schema: [{ name: 'bad name', type: 'int' }] }, { schema: [{ name: 'a', type: 'decimal' }] }, { schema: [], mode: 'merge' },
      { schema: [{ name: 'a', type: 'int' }], mode: 'upsert' },
      { schema: Array.from({ length: 129 }, (_, i) => ({ name: `f${i}`, type: 'int' })), mode: 'replace' },
    ]) {
      const r = await call('PATCH', `${base}/schema`, admin, bad);
      expect(r.status, JSON.stringify(bad).slice(0, 60)).toBe(400);
    }
    const replaced = await call('PATCH', `${base}/schema`, admin, { schema: [{ name: 'n', type: 'uint32' }], mode: 'replace' });
    expect(replaced.body).toMatchObject({ schema: [{ name: 'n', type: 'u32', source: 'user' }], schema_version: 3 });
    // 20 agreeing values promote an undeclared field.
    const vectors = Array.from({ length: 20 }, (_, i) => ({ id: i, values: [i, 1], metadata: { rank: i, n: String(i) } }));
    await call('POST', `${base}/insert`, member, { vectors });
    const after = (await call('GET', base, member)).body;
    expect(after.schema).toContainEqual({ name: 'rank', type: 'i64', source: 'inferred', confidence: 1, samples: 20 });
    expect(after.schema_version).toBe(4);
    // The declared u32 field compares as a number although the values were sent as strings.
    const r = await call('POST', `${base}/search`, member, { query: [1, 1], top_k: 20, advanced_filters: [{ field: 'n', op: 'gte', value: 18 }] });
    expect(r.body.results.map((h: { id: number }) => h.id).sort()).toEqual([18, 19]);
  });

  it('index, hybrid, promotion policy, defaults and SLA settings', async () => {
    const ds = await readyDataset({ name: 'settings', dim: 2 });
    const base = `/datasets/${ds.id}`;
    expect((await call('GET', `${base}/index`, member)).body).toMatchObject({ index_type: 'sable', status: 'empty' });
    await call('POST', `${base}/insert`, member, { vectors: Array.from({ length: 50 }, (_, i) => ({ id: i, values: [i, 1] })) });
    const post = await call('POST', `${base}/index`, member, { index_type: 'hnsw' });
    expect(post.status).toBe(202);
    expect(post.body.index_type).toBe('hnsw');
    expect((await call('POST', `${base}/index`, member, { index_type: 'lsh' })).status).toBe(400);
    expect((await call('POST', `${base}/index/rebuild`, member)).status).toBe(202);
    expect((await call('GET', `${base}/hybrid`, member)).body).toEqual({ enabled: false, alpha: 0.5 });
    expect((await call('PUT', `${base}/hybrid/alpha`, member, { alpha: 0.2 })).body).toEqual({ enabled: false, alpha: 0.2 });
    expect((await call('PUT', `${base}/hybrid/alpha`, member, { alpha: 2 })).status).toBe(400);
    expect((await call('PUT', `${base}/hybrid/enabled`, member, { enabled: true })).body.enabled).toBe(true);
    expect((await call('PUT', `${base}/promotion-policy`, member, { max_buffer_vectors: 10 })).body).toEqual({ max_buffer_vectors: 10, max_buffer_age_ms: 10000 });
    expect((await call('GET', `${base}/promotion-policy`, member)).body.max_buffer_vectors).toBe(10);
    expect((await call('PUT', `${base}/promotion-policy`, member, { max_buffer_vectors: 0 })).status).toBe(400);
    // The 50 rows were sealed by the new bound.
    expect(await indexed(base)).toMatchObject({ status: 'ready', progress: 100 });
    expect((await call('POST', `${base}/defaults/index-type`, member, { index_type: 'ivf' })).body.index_type).toBe('ivf');
    expect((await call('POST', `${base}/defaults/tuning`, member, { nlist: 8, nprobe_min: 2 })).body.tuning).toEqual({ nlist: 8, nprobe_min: 2, nprobe_max: 4 });
    const sla = await call('PUT', `${base}/sla`, member, { target_p99_us: 5000, min_nprobe: 2, max_nprobe_fraction: 50, min_beam_width: 16, max_beam_width: 256 });
    expect(sla.body).toMatchObject({ target_p99_us: 5000, observed_p99_us: null, current_nprobe: null, current_beam_width: null });
  });

it('the SLA observes the p99 of the searches made', async () => {
    const ds = await readyDataset({ name: 'observed', dim: 2 });
    const base = `/datasets/${ds.id}`;
    await call('POST', `${base}/insert`, member, { vectors: Array.from({ length: 50 }, (_, i) => ({ id: i, values: [i, 1] })) });
    const sla = await call('PUT', `${base}/sla`, member, { target_p99_us: 5000, min_nprobe: 2, max_nprobe_fraction: 50, min_beam_width: 16, max_beam_width: 256 });
    expect(sla.body).toMatchObject({ target_p99_us: 5000, observed_p99_us: null });
    await call('POST', `${base}/search`, member, { query: [1, 1] });
    expect((await call('GET', `${base}/sla`, member)).body.observed_p99_us).toBeGreaterThan(0);
  });

it('a rebuild answers 202 building from the moment it is accepted, then ends ready', async () => {
    const ds = await readyDataset({ name: 'rebuild', dim: 2 });
    const base = `/datasets/${ds.id}`;
    await call('POST', `${base}/insert`, member, { vectors: Array.from({ length: 50 }, (_, i) => ({ id: i, values: [i, 1] })) });
    expect((await call('POST', `${base}/index`, member, { index_type: 'hnsw' })).status).toBe(202);
    expect((await call('PUT', `${base}/promotion-policy`, member, { max_buffer_vectors: 10 })).status).toBe(200);
    // The 50 rows were sealed by the new bound; once indexed, a rebuild says so from the answer on.
    expect(await indexed(base)).toMatchObject({ status: 'ready', progress: 100 });
    const rebuilding = await call('POST', `${base}/index/rebuild`, member);
    expect(rebuilding.status).toBe(202);
    expect(rebuilding.body).toMatchObject({ status: 'building' });
    expect(rebuilding.body.progress).toBeLessThan(100);
    expect(await indexed(base)).toMatchObject({ status: 'ready', progress: 100 });
  });

  // cluster: by design, not a bug. This test's numbers are those of one index over all 901 rows
  // (nlist = 4 * sqrt(rows), one indexed partition in the receipt); sharded, each shard indexes
  // its own rows with its own lists, seals on its own writes, and the receipt holds a partition
  // per shard. The cluster's tuning in effect (the largest over the shards) and merged receipts
  // are checked by test/cluster/three-nodes.test.ts.
  it.skipIf(onCluster)('reports the tuning in effect, which follows the data until set, and bounds the nprobe the engine picks', async () => {
    const created = await call('POST', '/datasets', admin, { name: 'tuning', dim: 8 });
    // Provisioning and empty: no lists yet, the SLA tuner's nprobe floor.
    expect(created.body.tuning).toEqual({ nlist: 0, nprobe_min: 1, nprobe_max: 1 });
    const base = `/datasets/${created.body.id}`;
    await call('POST', `${base}/ensure-engine`, admin);
    await t().settle(created.body.id, admin);
    expect((await call('GET', base, member)).body.tuning).toEqual({ nlist: 0, nprobe_min: 1, nprobe_max: 1 });
    const rows = 900;
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const vectors = Array.from({ length: rows }, (_, i) => ({ id: i, values: Array.from({ length: 8 }, rand) }));
    // Held in the growing partition: the lists an index over these rows would get.
    expect((await call('POST', `${base}/insert`, member, { vectors })).status).toBe(200);
    expect((await call('GET', base, member)).body.tuning).toEqual({ nlist: 120, nprobe_min: 1, nprobe_max: 60 });
    // Sealed and built: the built index's lists.
    await call('PUT', `${base}/promotion-policy`, member, { max_buffer_vectors: 100 });
    await call('POST', `${base}/insert`, member, { vectors: [{ id: rows, values: Array.from({ length: 8 }, rand) }] });
    for (let i = 0; i < 500 && (await call('GET', `${base}/index`, member)).body.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 10));
    const built = (await call('GET', base, member)).body.tuning;
    expect(built.nlist).toBe(Math.round(4 * Math.sqrt(rows + 1)));
    expect(built.nprobe_max).toBe(Math.floor(built.nlist / 2));
    const probes = async (body: object) =>
      (await call('POST', `${base}/search`, member, { query: vectors[3].values, top_k: 10, ...body })).body.receipt.partitions
        .filter((p: { strategy: string }) => p.strategy === 'index')
        .map((p: { nprobe: number }) => p.nprobe);
    const picked = (await probes({}))[0];
    expect(picked).toBeGreaterThan(1);
    // Bounds set: the engine's pick is held in them; a search's own nprobe is used as given.
    const bounded = await call('POST', `${base}/defaults/tuning`, member, { nprobe_max: 1 });
    expect(bounded.body.tuning).toEqual({ nlist: built.nlist, nprobe_min: 1, nprobe_max: 1 });
    expect(await probes({})).toEqual([1]);
    expect(await probes({ nprobe_override: 5 })).toEqual([5]);
    await call('POST', `${base}/defaults/tuning`, member, { nprobe_min: 9, nprobe_max: 9 });
    expect(await probes({})).toEqual([9]);
    const inverted = await call('POST', `${base}/defaults/tuning`, member, { nprobe_min: 10, nprobe_max: 3 });
    expect(inverted.status).toBe(400);
    expect(inverted.body.message).toMatch(/nprobe_min \(10\) is above tuning.nprobe_max \(3\)/);
    expect((await call('GET', base, member)).body.tuning).toMatchObject({ nprobe_min: 9, nprobe_max: 9 });
    expect((await call('POST', '/datasets', admin, { name: 'inverted', dim: 2, tuning: { nprobe_min: 4, nprobe_max: 2 } })).status).toBe(400);
  });

  it('refuses bodies over the limit with 413, and serves health, metrics and OpenAPI', async () => {
    const ds = await readyDataset({ name: 'big', dim: 2 });
    const huge = { vectors: Array.from({ length: 20000 }, (_, i) => ({ id: i, values: [i, i] })) };
    const r = await call('POST', `/datasets/${ds.id}/insert`, admin, huge);
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('payload_too_large');
    expect((await call('GET', '/healthz', null)).body.status).toBe('ok');
    // Metrics are counted per process: a search through each, so whichever answers /metrics served one.
    for (const url of t().urls()) expect((await callAt(url, 'POST', `/datasets/${ds.id}/search`, admin, { query: [1, 1] })).status).toBe(200);
    const metrics = await call('GET', '/metrics', null);
    expect(metrics.body).toContain('sable_http_requests_total{method="POST",route="/datasets/:datasetId/search",status="200"}');
    expect(metrics.body).toContain('sable_http_request_duration_seconds_bucket');
    const doc = (await call('GET', '/openapi.json', null)).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/datasets/{datasetId}/search'].post.requestBody.content['application/json'].schema.properties.top_k).toBeDefined();
    expect(doc.paths['/datasets/{datasetId}/schema'].patch).toBeDefined();
  });

it('metrics count the live vectors of each dataset', async () => {
    const ds = await readyDataset({ name: 'counted', dim: 2 });
    expect((await call('POST', `/datasets/${ds.id}/insert`, admin, { vectors: [{ id: 1, values: [1, 1] }] })).status).toBe(200);
    const metrics = await call('GET', '/metrics', null);
    expect(metrics.body).toMatch(/sable_dataset_vectors\{dataset="[0-9a-f-]+"\} \d+/);
  });

  it('two string ids on one integer answer 409 id_collision, and nothing is overwritten', async () => {
    // A real 53-bit FNV-1a collision, found by a birthday search over 2^28 strings.
    const [a, b] = ['4ee98a0e162e4594', '87319117513cdead'];
    expect(fnv1a53(a)).toBe(fnv1a53(b));
    const ds = await readyDataset({ name: 'collide', dim: 2 });
    const base = `/datasets/${ds.id}`;
    expect((await call('POST', `${base}/insert`, admin, { vectors: [{ id: a, values: [1, 0], metadata: { who: 'a' } }] })).status).toBe(200);
    const clash = await call('POST', `${base}/insert`, admin, { vectors: [{ id: b, values: [0, 1], metadata: { who: 'b' } }] });
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ error: 'id_collision', id: fnv1a53(a) });
    const inBatch = await call('POST', `${base}/insert`, admin, { vectors: [{ id: 'fresh', values: [1, 1] }, { id: b, values: [0, 1] }, { id: a, values: [1, 0] }] });
    expect(inBatch.status).toBe(409);
    expect((await call('GET', `${base}/payload/${a}`, admin)).body).toMatchObject({ external_id: a, metadata: { who: 'a' } });
    expect((await call('GET', `${base}/stats`, admin)).body.vector_count).toBe(1);
  });

  it('speaks application/msgpack with float32 binary vectors on insert and search', async () => {
    const ds = await readyDataset({ name: 'packed', dim: 4, metric: 'l2' });
    const f32 = (...v: number[]) => Buffer.from(Float32Array.from(v).buffer);
    const post = async (path: string, value: unknown) => {
      const res = await fetch(t().url() + path, {
        method: 'POST',
        headers: { 'x-api-key': admin, 'content-type': 'application/msgpack', accept: 'application/msgpack' },
        body: pack(value),
      });
      // Answers and errors alike: the caller accepts msgpack.
      expect(res.headers.get('content-type')).toBe('application/msgpack');
      return { status: res.status, body: unpack(Buffer.from(await res.arrayBuffer())) };
    };
    const ins = await post(`/datasets/${ds.id}/insert`, { vectors: [
      { id: 7, values: f32(1, 2, 3, 4), metadata: { k: 'a' } },
      { id: 'eight', values: f32(4, 3, 2, 1) },
    ] });
    expect(ins).toEqual({ status: 200, body: { inserted: 2, embedded: 0 } });
    const found = await post(`/datasets/${ds.id}/search`, { query: f32(1, 2, 3, 4.5), top_k: 2, include_embeddings: true });
    expect(found.status).toBe(200);
    const [first, second] = found.body.results;
    expect(first).toMatchObject({ id: 7, metadata: { k: 'a' } });
    expect(first.score).toBeCloseTo(0.25, 5);
    expect(Array.from(new Float32Array(Uint8Array.from(first.embedding).buffer))).toEqual([1, 2, 3, 4]);
    expect(second.external_id).toBe('eight');
    expect((await post(`/datasets/${ds.id}/search`, { query: Buffer.alloc(6) })).status).toBe(400);
    expect((await post(`/datasets/${ds.id}/search`, { query: f32(1, 2) })).status).toBe(400);
    // JSON clients of the same routes are unaffected.
    expect((await call('POST', `/datasets/${ds.id}/search`, admin, { query: [1, 2, 3, 4] })).body.results[0].id).toBe(7);
  });

  // own-service: the test needs a service whose provisioning waits a minute (provision-delay-ms);
  // a cluster provisions by placing shard replicas, and its harness starts one cluster per file.
  it.skipIf(!can('own-service'))('a new dataset answers 503 dataset_not_ready with Retry-After until its engine is provisioned', async () => {
    const slow = await t().startOwn!({ 'provision-delay-ms': '60000' });
    try {
      const key = slow.admin;
      const post = (path: string, body: unknown) => fetch(slow.url + path, {
        method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      const created = await (await post('/datasets', { name: 'slow', dim: 2 })).json();
      expect(created.status).toBe('provisioning');
      const early = await post(`/datasets/${created.id}/insert`, { vectors: [{ id: 1, values: [1, 2] }] });
      expect(early.status).toBe(503);
      expect(early.headers.get('retry-after')).toBe('1');
      expect((await early.json()).error).toBe('dataset_not_ready');
      expect((await post(`/datasets/${created.id}/ensure-engine`, {})).status).toBe(200);
      expect((await post(`/datasets/${created.id}/insert`, { vectors: [{ id: 1, values: [1, 2] }] })).status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  it('a revoked key stops working at once', async () => {
    const k = await t().newKey('default', 'member');
    expect((await call('GET', '/datasets', k.key)).status).toBe(200);
    await t().revokeKey(k.key_id);
    expect((await call('GET', '/datasets', k.key)).status).toBe(401);
  });
}
