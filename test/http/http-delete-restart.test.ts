// Issue 10's steps over HTTP: four clients insert batches and delete earlier ids while the
// promotion policy seals a partition every few hundred milliseconds; the service is stopped
// (SIGTERM) or killed (SIGKILL, with requests in flight) and started again on the same data
// directory, several times. After each start no acknowledged delete is back (search, payload,
// vector_count) and every acknowledged insert is there.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seeded } from '../support/engine-model.mjs';
import { adminKey, client, serve, type Served } from '../support/serve.js';

const DIM = 16;
const CLIENTS = 4;
const LOAD_MS = 2500;
const ROUNDS: ('SIGTERM' | 'SIGKILL')[] = ['SIGTERM', 'SIGKILL', 'SIGTERM', 'SIGKILL'];

describe('acknowledged deletes across restarts (HTTP)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-delete-restart-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('never serves a deleted id again, after any restart or kill', async () => {
    let svc: Served = await serve(dir);
    const call = client(() => svc.url, adminKey(dir));
    const created = await call('POST', '/datasets', { name: 'deletes', dim: DIM, metric: 'cosine' });
    const base = `/datasets/${created.body.id}`;
    await call('POST', `${base}/ensure-engine`);
    expect((await call('PUT', `${base}/promotion-policy`, { max_buffer_age_ms: 300 })).status).toBe(200);

    const rand = seeded(10);
    const vectorOf = new Map<number, number[]>();
    const live = new Set<number>();
    const deleted = new Set<number>();
    /** Ids of requests that got no answer (the kill): either outcome is allowed. */
    const uncertain = new Set<number>();
    let deletesAcked = 0;

    const clientLoop = async (c: number, until: number) => {
      let next = c * 1_000_000;
      const mine: number[] = [];
      const gone: number[] = [];
      while (Date.now() < until) {
        const n = 1 + Math.floor(rand() * 50);
        const ids = Array.from({ length: n }, () => (gone.length > 0 && rand() < 0.1 ? gone.splice(Math.floor(rand() * gone.length), 1)[0] : next++));
        const vectors = ids.map(() => Array.from({ length: DIM }, () => rand() * 2 - 1));
        ids.forEach((id, i) => vectorOf.set(id, vectors[i]));
        const insert = await call('POST', `${base}/insert`, { vectors: ids.map((id, i) => ({ id, values: vectors[i], metadata: { c } })) }).catch(() => null);
        if (!insert) {
          ids.forEach((id) => uncertain.add(id));
          return;
        }
        expect(insert.status).toBe(200);
        for (const id of ids) {
          live.add(id);
          deleted.delete(id);
          mine.push(id);
        }
        const k = Math.min(mine.length, 1 + Math.floor(rand() * 10));
        const victims = Array.from({ length: k }, () => mine.splice(Math.floor(rand() * mine.length), 1)[0]);
        const del = await call('DELETE', `${base}/vectors`, { ids: victims }).catch(() => null);
        if (!del) {
          victims.forEach((id) => uncertain.add(id));
          return;
        }
        expect(del.body).toEqual({ deleted: victims.length });
        deletesAcked += victims.length;
        for (const id of victims) {
          live.delete(id);
          deleted.add(id);
          gone.push(id);
        }
      }
    };

    const check = async (label: string) => {
      // Requests cut by a kill: learn their outcome from the stored payload (LMDB), then the
      // segments must agree with it.
      for (const id of uncertain) {
        const payload = await call('GET', `${base}/payload/${id}`);
        live.delete(id);
        deleted.delete(id);
        (payload.status === 200 ? live : deleted).add(id);
      }
      uncertain.clear();
      const stats = await call('GET', `${base}/stats`);
      expect(stats.body.vector_count, `${label}: vector_count`).toBe(live.size);
      const sample = (set: Set<number>, n: number) => [...set].sort(() => rand() - 0.5).slice(0, n);
      for (const id of sample(deleted, 250)) {
        const found = await call('POST', `${base}/search`, { query: vectorOf.get(id), top_k: 5 });
        expect(found.status).toBe(200);
        const back = found.body.results.map((r: { id: number }) => r.id).filter((x: number) => deleted.has(x));
        expect(back, `${label}: deleted ids served by search`).toEqual([]);
        expect((await call('GET', `${base}/payload/${id}`)).status).toBe(404);
      }
      for (const id of sample(live, 100)) {
        const found = await call('POST', `${base}/search`, { query: vectorOf.get(id), top_k: 1 });
        expect(found.body.results[0]?.id, `${label}: live id ${id}`).toBe(id);
      }
    };

    try {
      for (const [round, signal] of ROUNDS.entries()) {
        const until = Date.now() + LOAD_MS;
        const clients = Array.from({ length: CLIENTS }, (_, c) => clientLoop(c + round * CLIENTS, until));
        if (signal === 'SIGTERM') {
          await Promise.all(clients);
          await check(`round ${round}, before the restart`);
        } else {
          // Killed under load: requests in flight get no answer.
          await new Promise((r) => setTimeout(r, LOAD_MS * 0.8));
        }
        await svc.stop(signal);
        await Promise.all(clients);
        svc = await serve(dir);
        await check(`round ${round}, after ${signal}`);
      }
      expect(deletesAcked).toBeGreaterThan(500);
      console.log(`delete/restart: ${deletesAcked} acknowledged deletes, ${live.size} live ids, ${ROUNDS.length} restarts`);
    } finally {
      await svc.stop('SIGTERM');
    }
  }, 120_000);
});
