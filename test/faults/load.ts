// What the cluster fault suites share: a load of writers, a deleter and searchers through the
// nodes a test names, the record of what the cluster acknowledged, and the acked-set check
// (every acknowledged write there with its metadata, every acknowledged delete gone).
import { expect } from 'vitest';
import { until503Passes, type TestCluster } from '../support/cluster.js';

export const DIM = 8;

export const sleep = (ms: number) => new Promise<void>((res) => setTimeout(res, ms));

export function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.sin(id * 0.37 + j * 1.3) + ((id * 7919) % 13) * 0.02);
}

/** What the load learnt: acknowledged upserts and deletes, and when each delete was acknowledged. */
export class Acked {
  readonly live = new Set<number>();
  readonly deletedAt = new Map<number, number>();
  /** Ids of a delete that got no answer: it may or may not have been applied. */
  readonly uncertain = new Set<number>();
  searches = 0;
  failedSearches: string[] = [];
  staleHits: string[] = [];
  writeFailures = 0;

  upserted(ids: number[]): void {
    for (const id of ids) {
      this.live.add(id);
      this.deletedAt.delete(id);
    }
  }

  deleted(ids: number[], at: number): void {
    for (const id of ids) {
      this.live.delete(id);
      this.uncertain.delete(id);
      this.deletedAt.set(id, at);
    }
  }

  /** A delete without an acknowledgement: its ids are checked neither as live nor as deleted. */
  maybeDeleted(ids: number[]): void {
    for (const id of ids) {
      this.live.delete(id);
      this.uncertain.add(id);
    }
  }
}

/**
 * Writers, a deleter and searchers through the nodes `through()` names, until `stop` resolves.
 * Ids are drawn from a counter; a write whose answer was not a 2xx is not acknowledged (it may
 * or may not have been applied: it is neither in the live set nor checked as deleted).
 */
export async function load(cluster: TestCluster, datasetId: string, acked: Acked, through: () => number[], stop: Promise<void>, idBase: number): Promise<void> {
  let running = true;
  void stop.then(() => (running = false));
  let next = idBase;
  // Only nodes that run now; a node that is down answers nothing (a call to it is not made).
  const pick = () => {
    const nodes = through().filter((i) => cluster.nodes[i] !== null);
    return nodes[Math.floor(Math.random() * nodes.length)] ?? 0;
  };
  // A call that fails at once (a refused connection) must not spin the loop on microtasks alone:
  // the timers that end the load would never run.
  const breathe = () => new Promise<void>((res) => setTimeout(res, 5));
  const writer = async () => {
    while (running) {
      const ids = Array.from({ length: 10 }, () => next++);
      const r = await cluster
        .call(pick())('POST', `/datasets/${datasetId}/insert`, { vectors: ids.map((id) => ({ id, values: vector(id), metadata: { n: id } })) })
        .catch(() => ({ status: 599, body: null }));
      if (r.status === 200) acked.upserted(ids);
      else {
        acked.writeFailures++;
        await breathe();
      }
    }
  };
  const deleter = async () => {
    while (running) {
      const victims = [...acked.live].filter((id) => id % 5 === 0 && !acked.uncertain.has(id)).slice(0, 5);
      if (victims.length === 0) {
        await new Promise((res) => setTimeout(res, 20));
        continue;
      }
      const r = await cluster.call(pick())('DELETE', `/datasets/${datasetId}/vectors`, { ids: victims }).catch(() => ({ status: 599, body: null }));
      if (r.status === 200) acked.deleted(victims, Date.now());
      else {
        acked.maybeDeleted(victims);
        acked.writeFailures++;
        await breathe();
      }
    }
  };
  const searcher = async () => {
    while (running) {
      const deletedBefore = [...acked.deletedAt.entries()];
      const probe = deletedBefore.length > 0 ? deletedBefore[Math.floor(Math.random() * deletedBefore.length)]![0] : idBase;
      const node = pick();
      const started = Date.now();
      const r = await cluster.call(node)('POST', `/datasets/${datasetId}/search`, { query: vector(probe), top_k: 5 }).catch((e: Error) => ({ status: 599, body: { message: e.message } }));
      acked.searches++;
      if (r.status !== 200) {
        acked.failedSearches.push(`n${node + 1}: ${r.status} ${JSON.stringify(r.body)}`);
        await breathe();
        continue;
      }
      for (const hit of r.body.results as { id: number }[]) {
        const at = acked.deletedAt.get(hit.id);
        if (at !== undefined && at < started) acked.staleHits.push(`id ${hit.id} deleted at ${at}, returned by a search started at ${started} on n${node + 1}`);
      }
    }
  };
  await Promise.all([writer(), writer(), deleter(), searcher(), searcher()]);
}

/** The acked-set check through node i: every live id readable with its metadata, every deleted id gone. */
export async function checkAcked(cluster: TestCluster, datasetId: string, acked: Acked, i: number): Promise<void> {
  for (const id of acked.live) {
    const p = await until503Passes(() => cluster.call(i)('GET', `/datasets/${datasetId}/payload/${id}`));
    expect(p.status, `acknowledged id ${id} through n${i + 1}: ${JSON.stringify(p.body)}`).toBe(200);
    expect(p.body.metadata.n).toBe(id);
  }
  for (const id of acked.deletedAt.keys()) {
    const p = await until503Passes(() => cluster.call(i)('GET', `/datasets/${datasetId}/payload/${id}`));
    expect(p.status, `deleted id ${id} through n${i + 1}`).toBe(404);
  }
}

