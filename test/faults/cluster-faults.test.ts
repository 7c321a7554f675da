// Fault tests of cluster mode (the design's F1, F2 and F11), a step of their own in CI
// (`npm run test:faults`): three nodes on 127.0.0.2-4, 2 shards x 2 replicas, a load of writes,
// deletes and searches through every node while a node is killed (-9), paused past its lease
// (SIGSTOP), or every process is killed at once. Every loop is bounded and every wait has a
// deadline. Invariants, checked on every answer and at the end:
//   - every write a node acknowledged is there afterwards, with its metadata, on every node
//     (the acked-set check), and every acknowledged delete stays deleted;
//   - no search returns an id whose delete was acknowledged before the search started;
//   - searches through a live node succeed (the router fails over between replicas itself).
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFrames, streamProblems } from '../../testkit/sse.js';
import { startCluster, until503Passes, type TestCluster } from '../support/cluster.js';
import { Acked, checkAcked as checkAckedOn, DIM, load as loadOn, sleep, vector } from './load.js';

let cluster: TestCluster;
/** A chat endpoint that never answers: a question's run stays running until its owner dies. */
let hangingModel: Server;
let datasetId = '';
const load = (acked: Acked, through: () => number[], stop: Promise<void>, idBase: number) => loadOn(cluster, datasetId, acked, through, stop, idBase);
const checkAcked = (acked: Acked, i: number) => checkAckedOn(cluster, datasetId, acked, i);

beforeAll(async () => {
  hangingModel = createServer(() => {});
  await new Promise<void>((res) => hangingModel.listen(0, '127.0.0.1', () => res()));
  const modelUrl = `http://127.0.0.1:${(hangingModel.address() as { port: number }).port}/v1`;
  cluster = await startCluster({ nodes: 3, leaseMs: 1500, graceMs: 500, ackTimeoutMs: 1500, env: { SABLE_LLM_URL: modelUrl, SABLE_LLM_API_KEY: 'unused', SABLE_LLM_TIMEOUT_MS: '120000' } });
  const made = await cluster.call(0)('POST', '/datasets', { name: 'faults', dim: DIM, metric: 'l2' });
  expect(made.status).toBe(201);
  datasetId = made.body.id;
  const first = await until503Passes(() => cluster.call(1)('POST', `/datasets/${datasetId}/insert`, { vectors: [{ id: 1, values: vector(1), metadata: { n: 1 } }] }));
  expect(first.status).toBe(200);
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  hangingModel?.closeAllConnections();
  hangingModel?.close();
});

describe('cluster faults', () => {
  it('F1: kill -9 of a node during writes, deletes and searches: the survivors answer every search, and every acknowledged write is there', async () => {
    const acked = new Acked();
    acked.upserted([1]);
    let killed = false;
    let stop!: () => void;
    const stopped = new Promise<void>((res) => (stop = res));
    const running = load(acked, () => (killed ? [0, 1] : [0, 1, 2]), stopped, 10_000);
    await sleep(2000);
    const before = acked.searches;
    // Searches routed to the dying node itself fail (connection refused): those are not the
    // survivors'. From the kill on, only the survivors are asked.
    killed = true;
    await cluster.nodes[2]!.stop('SIGKILL');
    cluster.nodes[2] = null;
    await sleep(4000);
    stop();
    await running;
    expect(acked.searches - before).toBeGreaterThan(20);
    const survivorsFailures = acked.failedSearches.filter((f) => !f.startsWith('n3'));
    expect(survivorsFailures, survivorsFailures.slice(0, 5).join('\n')).toEqual([]);
    expect(acked.staleHits, acked.staleHits.slice(0, 5).join('\n')).toEqual([]);
    expect(acked.live.size).toBeGreaterThan(50);
    await checkAcked(acked, 0);
    await checkAcked(acked, 1);
    // The node comes back as itself and rejoins.
    await cluster.start(2);
    await checkAcked(acked, 2);
  }, 120_000);

  it('F2: a node paused (SIGSTOP) past its lease: writes go on, it is demoted, then after SIGCONT it serves nothing stale and rejoins', async () => {
    const acked = new Acked();
    let stop!: () => void;
    const stopped = new Promise<void>((res) => (stop = res));
    const running = load(acked, () => [0, 1], stopped, 100_000);
    await sleep(1000);
    const paused = cluster.nodes[2]!;
    process.kill(paused.pid, 'SIGSTOP');
    await sleep(4000); // past the 1.5 s lease and the 0.5 s grace
    // While it is paused, writes through the others are acknowledged (a laggard is demoted).
    const during = acked.live.size;
    await sleep(2000);
    expect(acked.live.size).toBeGreaterThan(during);
    process.kill(paused.pid, 'SIGCONT');
    // Right after it resumes, and later, the searches through it must not return deleted ids:
    // the load now goes through all three nodes.
    stop();
    await running;
    const acked2 = acked;
    let stop2!: () => void;
    const stopped2 = new Promise<void>((res) => (stop2 = res));
    const running2 = load(acked2, () => [0, 1, 2], stopped2, 200_000);
    await sleep(4000);
    stop2();
    await running2;
    expect(acked2.staleHits, acked2.staleHits.slice(0, 5).join('\n')).toEqual([]);
    // Searches through the resumed node may fail while it renews its lease; none after.
    const health = await until503Passes(async () => {
      const h = await (await fetch(`${paused.url}/healthz`)).json();
      return { status: h.cluster.serving ? 200 : 503, body: h };
    }, 10_000);
    expect(health.status).toBe(200);
    for (const i of [0, 1, 2]) await checkAcked(acked2, i);
  }, 120_000);

  it('F6: the node answering a question is killed: another node ends its run failed, with an error and exactly one done', async () => {
    // A dataset of texts (the local model embeds them): the answer is the model's to write.
    const texts = await cluster.call(0)('POST', '/datasets', { name: 'f6-texts' });
    const put = await until503Passes(() =>
      cluster.call(0)('POST', `/datasets/${texts.body.id}/insert`, { vectors: [{ id: 1, metadata: { text: 'The keeper climbs 217 steps every evening to light the lamp.' } }] }),
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const started = await fetch(`${cluster.nodes[1]!.url}/intelligence/query`, {
      method: 'POST',
      headers: { 'x-api-key': cluster.key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'How many steps does the keeper climb?', dataset_ids: [texts.body.id], run_id: 'orphan', mode: 'fast' }),
    });
    const first = await readFrames(started, { stopAfter: 1 });
    expect(first[0]!.metadata.action).toBe('query.received');
    // The run waits on the model. Once its first chunks are recorded (they are written within
    // 50 ms of being sent), its owner dies.
    let recorded = 0;
    for (let k = 0; k < 100 && recorded < 2; k++) {
      const r = await cluster.call(0)('GET', '/intelligence/runs/orphan');
      if (r.status === 200) recorded = r.body.last_seq;
      if (recorded < 2) await sleep(50);
    }
    expect(recorded).toBeGreaterThanOrEqual(2);
    expect((await cluster.call(0)('GET', '/intelligence/runs/orphan')).body.status).toBe('running');
    const killedAt = Date.now();
    await cluster.nodes[1]!.stop('SIGKILL');
    cluster.nodes[1] = null;
    let status = 'running';
    while (status === 'running' && Date.now() - killedAt < 20_000) {
      await sleep(100);
      status = (await cluster.call(0)('GET', '/intelligence/runs/orphan')).body.status;
    }
    expect(status).toBe('failed');
    // Within the lease (1.5 s) and the grace (0.5 s), and a pass of the reaper.
    expect(Date.now() - killedAt).toBeLessThan(8000);
    const replay = await fetch(`${cluster.nodes[2]!.url}/intelligence/runs/orphan/events`, { headers: { 'x-api-key': cluster.key, accept: 'text/event-stream' } });
    const frames = await readFrames(replay);
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => i + 1));
    expect(frames.filter((f) => f.chunk_type === 'done')).toHaveLength(1);
    expect(frames.at(-1)).toMatchObject({ chunk_type: 'done', metadata: { status: 'failed' } });
    expect(frames.at(-2)!.chunk_type).toBe('error');
    expect(frames[0]!.metadata.action).toBe('query.received');
    expect(streamProblems(frames).filter((p) => !/citation/.test(p))).toEqual([]);
  }, 60_000);

  it('F11: every process killed at once, then all started again: every acknowledged insert and delete is reflected', async () => {
    // A test before may have left a node down (F6 kills one): all three take part here.
    for (const i of [0, 1, 2]) if (cluster.nodes[i] === null) await cluster.start(i);
    const acked = new Acked();
    let stop!: () => void;
    const stopped = new Promise<void>((res) => (stop = res));
    const running = load(acked, () => [0, 1, 2], stopped, 300_000);
    await sleep(2000);
    await Promise.all(cluster.nodes.map((n) => n?.stop('SIGKILL')));
    stop();
    await running;
    expect(acked.live.size).toBeGreaterThan(20);
    for (let i = 0; i < 3; i++) cluster.nodes[i] = null;
    await Promise.all([0, 1, 2].map((i) => cluster.start(i)));
    for (const i of [0, 1, 2]) await checkAcked(acked, i);
    const s = await until503Passes(() => cluster.call(0)('POST', `/datasets/${datasetId}/search`, { query: vector([...acked.live][0]!), top_k: 1 }));
    expect(s.status).toBe(200);
    expect(s.body.results[0].id).toBe([...acked.live][0]);
  }, 120_000);
});
