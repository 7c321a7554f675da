// Three `sable serve` processes in cluster mode on 127.0.0.2-4, one PostgreSQL and one local S3
// server, all started here: the catalog is shared (a key and a dataset made on one node are used
// on the others), vectors are split over 2 shards with 2 replicas each, writes go through the
// shard logs with their write concern, searches fan out and merge (checked against brute force),
// an acknowledged delete is gone from every node's searches, and after `kill -9` of a node the
// others keep answering, a write that needs every replica waits for a replacement, and every
// acknowledged write is there (the acked-set check).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desiredReplicas } from '../../dist/cluster/placement.js';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { readFrames, streamProblems } from '../../testkit/sse.js';
import { startCluster, until503Passes, type TestCluster } from '../support/cluster.js';
import { client } from '../support/serve.js';

const DIM = 8;
const cli = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');

let cluster: TestCluster;
const call = (i: number) => cluster.call(i);

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.sin(id * 1.7 + j * 0.9) + (id % 7) * 0.05);
}

function l2(a: number[], b: number[]): number {
  return a.reduce((s, x, j) => s + (x - b[j]!) ** 2, 0);
}

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3 });
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('a three-node cluster', () => {
  let datasetId = '';
  const live = new Map<number, number[]>(); // acked upserts not deleted since
  const deleted = new Set<number>();

  it('shares its catalog: the first node made the only admin key; a dataset made on one node is listed on the others', async () => {
    const health = await (await fetch(`${cluster.nodes[1]!.url}/healthz`)).json();
    expect(health.cluster).toMatchObject({ node_id: 'n2', roles: ['api', 'search', 'worker'], serving: true });
    const made = await call(0)('POST', '/datasets', { name: 'docs', dim: DIM, metric: 'l2' });
    expect(made.status).toBe(201);
    datasetId = made.body.id ?? made.body.dataset?.id;
    expect(datasetId).toBeTruthy();
    for (const i of [1, 2]) {
      const listed = await until503Passes(() => call(i)('GET', `/datasets/${datasetId}`));
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    }
    // The name is taken cluster-wide.
    const again = await call(2)('POST', '/datasets', { name: 'docs', dim: DIM });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('dataset_exists');
  });

  it('writes through any node, searches through any other: results are the exact top 10 over both shards', async () => {
    const ids = Array.from({ length: 240 }, (_, i) => i + 1);
    for (let b = 0; b < ids.length; b += 60) {
      const batch = ids.slice(b, b + 60);
      const r = await until503Passes(() => call(b % 3)('POST', `/datasets/${datasetId}/insert`, { vectors: batch.map((id) => ({ id, values: vector(id), metadata: { n: id, even: id % 2 === 0 } })) }));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.inserted).toBe(batch.length);
      for (const id of batch) live.set(id, vector(id));
    }
    for (const [i, q] of [[0, 5], [1, 77], [2, 199]] as const) {
      const query = vector(q).map((x) => x + 0.01);
      const r = await call(i)('POST', `/datasets/${datasetId}/search`, { query, top_k: 10 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const expected = [...live.entries()].sort((a, b) => l2(query, a[1]) - l2(query, b[1]) || a[0] - b[0]).slice(0, 10).map(([id]) => id);
      expect(r.body.results.map((h: { id: number }) => h.id)).toEqual(expected);
      expect(r.body.results[0].metadata).toMatchObject({ n: r.body.results[0].id });
    }
    // Filters apply in every shard.
    const even = await call(1)('POST', `/datasets/${datasetId}/search`, { query: vector(3), top_k: 20, filters: { even: true } });
    expect(even.body.results).toHaveLength(20);
    expect(even.body.results.every((h: { id: number }) => h.id % 2 === 0)).toBe(true);
    // A point read finds its shard.
    const payload = await call(2)('GET', `/datasets/${datasetId}/payload/77`);
    expect(payload.status).toBe(200);
    expect(payload.body.metadata).toMatchObject({ n: 77, even: false });
    // A bad query is the caller's 400 from every replica, not a routing failure.
    const bad = await call(0)('POST', `/datasets/${datasetId}/search`, { query: [1, 2, 3], top_k: 5 });
    expect(bad.status).toBe(400);
  });

  it('an acknowledged delete (write_concern all) is gone from every node at once', async () => {
    const gone = Array.from({ length: 40 }, (_, i) => i * 3 + 2);
    const r = await call(2)('DELETE', `/datasets/${datasetId}/vectors`, { ids: [...gone, 100_000], write_concern: 'all' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.deleted).toBe(gone.length);
    for (const id of gone) {
      live.delete(id);
      deleted.add(id);
    }
    for (const i of [0, 1, 2]) {
      for (const id of gone.slice(0, 8)) {
        const s = await call(i)('POST', `/datasets/${datasetId}/search`, { query: vector(id), top_k: 5 });
        expect(s.body.results.map((h: { id: number }) => h.id)).not.toContain(id);
      }
      expect((await call(i)('GET', `/datasets/${datasetId}/payload/${gone[0]}`)).status).toBe(404);
    }
  });

  it('a hybrid search fuses the shards\' candidate pools as one dataset fuses its own', async () => {
    const made = await call(0)('POST', '/datasets', { name: 'recipes', dim: 2, metric: 'cosine', hybrid: true });
    expect(made.status).toBe(201);
    const base = `/datasets/${made.body.id}`;
    const recipes = [
      { id: 1, values: [1, 0], metadata: { text: 'tomato soup with basil', kind: 'soup' } },
      { id: 2, values: [0.9, 0.1], metadata: { text: 'creamy mushroom soup', kind: 'soup' } },
      { id: 3, values: [0, 1], metadata: { text: 'fresh pasta with tomato sauce', kind: 'main' } },
      { id: 4, values: [0.1, 0.9], metadata: { text: 'grilled fish', kind: 'main' } },
    ];
    const put = await until503Passes(() => call(1)('POST', `${base}/insert`, { vectors: recipes }));
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    // alpha 1 is pure vector: the order of the cosine distances over both shards' rows.
    const dense = await call(2)('POST', `${base}/search`, { query: [1, 0], sparse_query: 'pasta', top_k: 4, alpha: 1 });
    expect(dense.body.results.map((h: { id: number }) => h.id)).toEqual([1, 2, 4, 3]);
    const fused = await call(0)('POST', `${base}/search`, { query: [1, 0], sparse_query: 'pasta tomato', top_k: 4, alpha: 0.5 });
    const ids = fused.body.results.map((h: { id: number }) => h.id);
    expect(ids[0]).toBe(1);
    expect(ids.indexOf(3)).toBeLessThan(ids.indexOf(2));
    for (let i = 1; i < fused.body.results.length; i++) expect(fused.body.results[i].score).toBeGreaterThanOrEqual(fused.body.results[i - 1].score);
    const words = await call(1)('POST', `${base}/search`, { query: [1, 0], sparse_query: 'mushroom', top_k: 1, alpha: 0 });
    expect(words.body.results[0].id).toBe(2);
    const soups = await call(2)('POST', `${base}/search`, { query: [0, 1], sparse_query: 'tomato', filters: { kind: 'soup' }, top_k: 4 });
    expect(soups.body.results.map((h: { id: number }) => h.id).sort()).toEqual([1, 2]);
  });

  it('stats, index and settings routes answer for the whole dataset through any node', async () => {
    const stats = await call(1)('GET', `/datasets/${datasetId}/stats`);
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    expect(stats.body.vector_count).toBe(live.size);
    // The tuning in effect is the shards': lists follow their rows (none while a dataset is empty).
    const view = await call(2)('GET', `/datasets/${datasetId}`);
    expect(view.body.tuning.nlist).toBeGreaterThan(0);
    expect(view.body.tuning.nprobe_max).toBeGreaterThanOrEqual(view.body.tuning.nprobe_min);
    // A search's receipt tells how every shard searched: a partition of each, at least.
    const searched = await call(0)('POST', `/datasets/${datasetId}/search`, { query: vector(9), top_k: 3 });
    expect(searched.body.receipt.partitions.length).toBeGreaterThanOrEqual(2);
    expect(searched.body.receipt.partitions_searched).toBe(searched.body.receipt.partitions.length);
    expect(stats.body).toMatchObject({ dim: DIM, metric: 'l2', index_type: 'sable' });
    const index = await call(2)('GET', `/datasets/${datasetId}/index`);
    expect(index.status).toBe(200);
    expect((await call(0)('POST', `/datasets/${datasetId}/index/rebuild`)).status).toBe(202);
    // Settings set through one node hold on every replica, read through another.
    const policy = await call(0)('PUT', `/datasets/${datasetId}/promotion-policy`, { max_buffer_vectors: 5000 });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect(policy.body.max_buffer_vectors).toBe(5000);
    expect((await call(2)('GET', `/datasets/${datasetId}/promotion-policy`)).body.max_buffer_vectors).toBe(5000);
    const sla = await call(1)('PUT', `/datasets/${datasetId}/sla`, { target_p99_us: 20_000 });
    expect(sla.status, JSON.stringify(sla.body)).toBe(200);
    expect((await call(0)('GET', `/datasets/${datasetId}/sla`)).body.target_p99_us).toBe(20_000);
    // A value the engine refuses is the caller's 400, and the setting before it stays.
    const bad = await call(2)('PUT', `/datasets/${datasetId}/sla`, { min_beam_width: 500, max_beam_width: 10 });
    expect(bad.status, JSON.stringify(bad.body)).toBe(400);
    const after = (await call(1)('GET', `/datasets/${datasetId}/sla`)).body;
    expect(after.target_p99_us).toBe(20_000);
    expect(after.min_beam_width).toBeLessThanOrEqual(after.max_beam_width);
    // An aggregate asked as a question counts the rows of every shard (the compute tool).
    const counted = await call(0)('POST', '/intelligence/query', { query: 'How many vectors are there?', dataset_ids: [datasetId], stream: false, mode: 'agentic' });
    expect(counted.status, JSON.stringify(counted.body)).toBe(200);
    expect(counted.body.metadata.computed[0]).toMatchObject({ op: 'count', rows: live.size, value: live.size, truncated: false });
    // Searches still answer exactly after the rebuild and the new settings.
    const s = await call(2)('POST', `/datasets/${datasetId}/search`, { query: vector(76), top_k: 1 });
    expect(s.body.results[0].id).toBe(76);
  });

  it('after kill -9 of a node: searches and one/default writes go on; `all` waits for a replacement replica; every acked write is there', async () => {
    await cluster.nodes[2]!.stop('SIGKILL');
    cluster.nodes[2] = null;
    // Searches on the survivors: a replica on the dead node fails over to the other one.
    const t0 = Date.now();
    let firstOk = -1;
    for (let k = 0; k < 100 && firstOk < 0; k++) {
      const s = await call(k % 2)('POST', `/datasets/${datasetId}/search`, { query: vector(10), top_k: 10 });
      if (s.status === 200) firstOk = Date.now() - t0;
      else expect(s.body.error).toBe('vecstack_router_failed');
    }
    expect(firstOk).toBeGreaterThanOrEqual(0);
    // Writes that need one replica succeed while the dead node's lease runs out.
    const more = Array.from({ length: 30 }, (_, i) => 1000 + i);
    const w = await until503Passes(() => call(0)('POST', `/datasets/${datasetId}/insert`, { vectors: more.map((id) => ({ id, values: vector(id) })) }));
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    for (const id of more) live.set(id, vector(id));
    const del = await until503Passes(() => call(1)('DELETE', `/datasets/${datasetId}/vectors`, { ids: [1000, 1001], write_concern: 'one' }));
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    for (const id of [1000, 1001]) {
      live.delete(id);
      deleted.add(id);
    }
    // `all` needs both replicas of every touched shard in sync: it passes once the controller
    // placed a replacement on the surviving node and it caught up.
    const all = await until503Passes(() => call(1)('DELETE', `/datasets/${datasetId}/vectors`, { ids: [1002], write_concern: 'all' }), 30_000);
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    live.delete(1002);
    deleted.add(1002);

    // The acked-set check, through each survivor.
    for (const i of [0, 1]) {
      for (const id of live.keys()) {
        const p = await until503Passes(() => call(i)('GET', `/datasets/${datasetId}/payload/${id}`));
        expect(p.status, `id ${id} on node ${i + 1}`).toBe(200);
      }
      for (const id of deleted) expect((await call(i)('GET', `/datasets/${datasetId}/payload/${id}`)).status, `deleted id ${id}`).toBe(404);
    }
    const s = await call(0)('POST', `/datasets/${datasetId}/search`, { query: vector(1010), top_k: 1 });
    expect(s.body.results[0].id).toBe(1010);
  }, 90_000);

  it('a restarted node rejoins: it rebuilds its catalog copy and replicas from the logs and serves', async () => {
    await cluster.start(2);
    const h = await (await fetch(`${cluster.nodes[2]!.url}/healthz`)).json();
    expect(h.cluster.serving).toBe(true);
    const r = await until503Passes(() => call(2)('POST', `/datasets/${datasetId}/search`, { query: vector(21), top_k: 3 }));
    expect(r.status).toBe(200);
    expect(r.body.results[0].id).toBe(21);
    expect((await call(2)('GET', `/datasets/${datasetId}/payload/20`)).status).toBe(404);
    // The controller converges on the placement rendezvous hashing asks for with the three nodes
    // live: each shard's in-sync replicas are its two desired nodes (n3 among them where it ranks).
    const db = new pg.Client({ connectionString: cluster.pg.url });
    await db.connect();
    const nodes = [1, 2, 3].map((k) => ({ id: `n${k}`, zone: null }));
    const activeOf = async () => {
      const { rows } = await db.query(`SELECT shard, node FROM shard_replicas WHERE dataset = $1 AND state = 'active' ORDER BY shard, node`, [datasetId]);
      return [0, 1].map((shard) => rows.filter((r) => r.shard === shard).map((r) => r.node));
    };
    const desired = [0, 1].map((shard) => desiredReplicas(datasetId, shard, 2, nodes).sort());
    const end = Date.now() + 20_000;
    let active = await activeOf();
    while (JSON.stringify(active) !== JSON.stringify(desired) && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 200));
      active = await activeOf();
    }
    await db.end();
    expect(active).toEqual(desired);
    const hosted = (await (await fetch(`${cluster.nodes[2]!.url}/healthz`)).json()).cluster.replicas;
    expect(hosted).toBeGreaterThanOrEqual(desired.filter((d) => d.includes('n3')).length);
  }, 60_000);

  it('an ingestion job queued through one node is listed by every node, runs on a worker, and its chunks are searched through another', async () => {
    const ds = await call(0)('POST', '/datasets', { name: 'texts' });
    expect(ds.status).toBe(201);
    const src = await call(0)('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'notes', config: { sync_mode: 'incremental' } });
    expect(src.status, JSON.stringify(src.body)).toBe(201);
    const files = [
      { name: 'lighthouse.md', text: '# The lighthouse\n\nThe keeper climbs 217 steps every evening to light the lamp.\n', type: 'text/markdown' },
      { name: 'bees.txt', text: 'A honey bee visits fifty to one hundred flowers on each trip out of the hive.\n', type: 'text/plain' },
    ];
    const init = await call(1)('POST', `/ingestion/sources/${src.body.id}/upload/init`, {
      dataset_id: ds.body.id,
      files: files.map((f) => ({ name: f.name, size_bytes: Buffer.byteLength(f.text), content_type: f.type })),
    });
    expect(init.status, JSON.stringify(init.body)).toBeLessThan(300);
    for (const [k, f] of files.entries()) {
      const put = await fetch(init.body.uploads[k].upload_url, { method: 'PUT', headers: { 'content-type': f.type }, body: f.text });
      expect(put.status).toBeLessThan(300);
    }
    const done = await call(2)('POST', `/ingestion/sources/${src.body.id}/upload/complete`, { job_id: init.body.job_id, file_ids: init.body.uploads.map((u: { file_id: string }) => u.file_id) });
    expect(done.status, JSON.stringify(done.body)).toBeLessThan(300);
    const end = Date.now() + 60_000;
    let job: any;
    while (Date.now() < end) {
      job = (await call((Date.now() / 100) % 3 | 0)('GET', `/ingestion/jobs/${init.body.job_id}`)).body;
      if (job?.status === 'completed' || job?.status === 'failed') break;
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(job.status, JSON.stringify(job)).toBe('completed');
    for (const i of [0, 1, 2]) expect((await call(i)('GET', `/ingestion/jobs/${init.body.job_id}`)).body.status).toBe('completed');
    const docs = await call(1)('GET', `/datasets/${ds.body.id}/documents`);
    expect(docs.body.documents.map((d: { status: string }) => d.status)).toEqual(['ready', 'ready']);
    const hit = await call(2)('POST', `/datasets/${ds.body.id}/search`, { query_text: 'how many steps does the keeper climb?', top_k: 1, include_documents: true });
    expect(hit.status, JSON.stringify(hit.body)).toBe(200);
    expect(hit.body.results[0].doc_value).toContain('217 steps');
    // A question asked through another node reads the shards (search, then the whole document
    // through the answer tools) and cites the passage; its preview opens through a third.
    const answer = await call(1)('POST', '/intelligence/query', { query: 'How many steps does the keeper climb?', dataset_ids: [ds.body.id], stream: false, mode: 'agentic' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.answer).toContain('217 steps');
    const ref = answer.body.sources[0].preview_ref;
    const preview = await call(2)('GET', `/intelligence/previews/${encodeURIComponent(ref)}`);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.chunks[0].text).toContain('217 steps');
    // Over every dataset of the organization: the vectors dataset's columns are read from its shards.
    const all = await call(0)('POST', '/intelligence/query', { query: 'What does a honey bee visit?', stream: false });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.answer).toContain('flowers');
  }, 90_000);

  it('a question streamed from one node resumes on another with Last-Event-ID: every chunk once, in order, one done', async () => {
    const texts = (await call(0)('GET', '/datasets')).body.datasets.find((d: { name: string }) => d.name === 'texts');
    const key = cluster.key;
    const started = await fetch(`${cluster.nodes[0]!.url}/intelligence/query`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'What do bees visit?', dataset_ids: [texts.id], run_id: 'bees-across' }),
    });
    const first = await readFrames(started, { stopAfter: 3 });
    expect(first.map((f) => f.id)).toEqual([1, 2, 3]);
    // The rest through node 2, as an EventSource reconnecting there would ask.
    const resumed = await fetch(`${cluster.nodes[2]!.url}/intelligence/runs/bees-across/events`, { headers: { 'x-api-key': key, accept: 'text/event-stream', 'last-event-id': '3' } });
    expect(resumed.status).toBe(200);
    const rest = await readFrames(resumed);
    const all = [...first, ...rest];
    expect(all.map((f) => f.id)).toEqual(all.map((_, i) => i + 1));
    expect(streamProblems(all)).toEqual([]);
    expect(rest.at(-1)!.chunk_type).toBe('done');
    expect(rest.at(-1)!.metadata.status).toBe('succeeded');
    expect(all.filter((f) => f.chunk_type === 'text').map((f) => f.content).join('')).toContain('flowers');
    // Its record, and a JSON replay, through the third node.
    const record = await call(1)('GET', '/intelligence/runs/bees-across');
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ run_id: 'bees-across', status: 'succeeded', last_seq: all.length });
    expect(record.body.answer).toContain('flowers');
    const events = await call(1)('GET', '/intelligence/runs/bees-across/events?after=3');
    expect(events.body.events.every((e: { seq: number }) => e.seq > 3)).toBe(true);
    // The same question and run_id through another node re-attaches to the run, not a new one.
    const again = await call(2)('POST', '/intelligence/query', { query: 'What do bees visit?', dataset_ids: [texts.id], run_id: 'bees-across', stream: false });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.answer).toContain('flowers');
    expect((await call(2)('POST', '/intelligence/query', { query: 'Another question', run_id: 'bees-across', stream: false })).status).toBe(409);
  });

  it('a Parquet bulk load initiated through one node is loaded by a worker into every shard and searched through another', async () => {
    const ds = await call(2)('POST', '/datasets', { name: 'bulk', dim: DIM, metric: 'l2' });
    const rows = 3000;
    const vectors = new Float32Array(rows * DIM);
    for (let i = 0; i < rows; i++) vectors.set(vector(50_000 + i), i * DIM);
    const bytes = parquetBytes([{ ids: BigInt64Array.from({ length: rows }, (_, i) => BigInt(50_000 + i)), vectors, dim: DIM, metadata: { tag: Int32Array.from({ length: rows }, (_, i) => i % 3) } }]);
    const init = await call(0)('POST', `/v1/datasets/${ds.body.id}/upload/init`, { files: [{ name: 'v.parquet', size_bytes: bytes.byteLength, content_type: 'application/vnd.apache.parquet' }] });
    expect(init.status, JSON.stringify(init.body)).toBeLessThan(300);
    const put = await fetch(init.body.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': 'application/vnd.apache.parquet' }, body: bytes });
    expect(put.status).toBeLessThan(300);
    const done = await call(1)('POST', `/v1/datasets/${ds.body.id}/upload/complete`, { job_id: init.body.job_id, file_ids: [init.body.uploads[0].file_id] });
    expect(done.status, JSON.stringify(done.body)).toBeLessThan(300);
    let job: any;
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      job = (await call(2)('GET', `/v1/jobs/${init.body.job_id}`)).body;
      if (job?.status === 'completed' || job?.status === 'failed') break;
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(job.vectors_inserted).toBe(rows);
    expect((await call(1)('GET', `/datasets/${ds.body.id}/stats`)).body.vector_count).toBe(rows);
    const s = await call(1)('POST', `/datasets/${ds.body.id}/search`, { query: vector(51_234), top_k: 1, filters: { tag: 1234 % 3 } });
    expect(s.body.results[0].id).toBe(51_234);
    // The batches went to object storage; the shard logs hold their keys only.
    const db = new pg.Client({ connectionString: cluster.pg.url });
    await db.connect();
    try {
      const { rows: log } = await db.query(`SELECT op, body IS NULL AS no_body, blob_key FROM vector_log WHERE dataset = $1`, [ds.body.id]);
      expect(log.length).toBeGreaterThanOrEqual(2);
      expect(log.every((e) => e.op === 'bulk' && e.no_body && /^cluster\/log\/[0-9a-f]{16}\/\d+\/[0-9a-f-]{36}\.entry$/.test(e.blob_key))).toBe(true);
    } finally {
      await db.end();
    }
  }, 90_000);

  it('`sable keys create` with SABLE_DATABASE_URL writes the cluster catalog: the key works on every node', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'keys', 'create', '--org', 'default', '--role', 'member'], { env: { ...process.env, ...cluster.env } });
    const made = JSON.parse(stdout) as { key: string };
    for (const i of [0, 1, 2]) {
      const r = await until503Passes(async () => {
        const res = await client(() => cluster.nodes[i]!.url, made.key)('GET', '/datasets');
        return res.status === 401 ? { status: 503, body: res.body } : res; // the copy catches up within a poll
      }, 5000);
      expect(r.status).toBe(200);
    }
  });
});
