// Crash suite, writes: `sable serve` runs as a child process; four clients insert new ids, upsert
// (replace vector and metadata of) their own ids and delete them, while the promotion policy
// seals partitions underneath; the service is killed with SIGKILL at a random moment and started
// again on the same data directory, many times. After every restart each acknowledged write is
// there (payload and metadata, vector_count, search), each acknowledged delete stays deleted, a
// batch cut by the kill is applied whole or not at all, and the index answers as exact search
// over the recovered rows. `npm run test:crash` runs it with 20 kills (SABLE_CRASH_KILLS).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crashSeed, eachLimited, expectExactTop10, killsFor, report, seededRandom, sleep } from '../support/crash.js';
import { adminKey, client, serve, type Served } from '../support/serve.js';

const DIM = 16;
const CLIENTS = 4;
const KILLS = killsFor(3);

type Meta = { c: number; v: number; round: number };
type State = { live: true; vec: number[]; meta: Meta } | { live: false };
/** A request whose answer the kill cut off: its ids and the state each has if it was applied. */
interface InFlight {
  kind: 'put' | 'delete';
  ids: number[];
  next: State[];
}

describe('crash suite: writes under kill -9', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-crash-writes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`keeps every acknowledged write and delete across ${KILLS} kills`, async () => {
    const seed = crashSeed('writes');
    const rand = seededRandom(seed);
    const started = Date.now();
    let svc: Served = await serve(dir);
    const call = client(() => svc.url, adminKey(dir));
    const created = await call('POST', '/datasets', { name: 'crash-writes', dim: DIM, metric: 'cosine' });
    const base = `/datasets/${created.body.id}`;
    await call('POST', `${base}/ensure-engine`);
    // Seal often, so kills land during sealing, index builds and snapshot writes too.
    expect((await call('PUT', `${base}/promotion-policy`, { max_buffer_age_ms: 250, max_buffer_vectors: 400 })).status).toBe(200);

    const acked = new Map<number, State>();
    const owned: number[][] = Array.from({ length: CLIENTS }, () => []);
    let nextId = 1;
    let writesAcked = 0;
    let lost = 0;
    let halfApplied = 0;
    let checked = 0;
    const problems: string[] = [];
    const vector = () => Array.from({ length: DIM }, () => rand() * 2 - 1);
    const stateOf = (id: number): State => acked.get(id) ?? { live: false };
    /** The last vector each id was written with: a deleted id is searched for with it. */
    const lastVector = new Map<number, number[]>();
    const record = (id: number, s: State) => {
      acked.set(id, s);
      if (s.live) lastVector.set(id, s.vec);
    };

    const clientLoop = async (c: number, round: number, inFlight: InFlight[]) => {
      let version = 0;
      for (;;) {
        const mine = owned[c]!;
        const pick = rand();
        let op: InFlight;
        if (pick < 0.5 || mine.length < 20) {
          const ids = Array.from({ length: 1 + Math.floor(rand() * 40) }, () => nextId++);
          mine.push(...ids);
          op = { kind: 'put', ids, next: ids.map(() => ({ live: true, vec: vector(), meta: { c, v: ++version, round } })) };
        } else {
          // Distinct ids of this client's (live or deleted: an upsert brings a deleted id back).
          const want = pick < 0.75 ? 1 + Math.floor(rand() * 30) : 1 + Math.floor(rand() * 10);
          const ids = [...new Set(Array.from({ length: want }, () => mine[Math.floor(rand() * mine.length)]!))];
          op = pick < 0.75
            ? { kind: 'put', ids, next: ids.map(() => ({ live: true, vec: vector(), meta: { c, v: ++version, round } })) }
            : { kind: 'delete', ids, next: ids.map(() => ({ live: false })) };
        }
        inFlight[c] = op;
        const answer =
          op.kind === 'put'
            ? await call('POST', `${base}/insert`, { vectors: op.ids.map((id, i) => { const s = op.next[i] as Extract<State, { live: true }>; return { id, values: s.vec, metadata: s.meta }; }) }).catch(() => null)
            : await call('DELETE', `${base}/vectors`, { ids: op.ids }).catch(() => null);
        // No answer: the kill. The request stays in flight for the check to resolve.
        if (!answer) return;
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        if (op.kind === 'delete') expect(answer.body.deleted).toBe(op.ids.filter((id) => stateOf(id).live).length);
        op.ids.forEach((id, i) => record(id, op.next[i]!));
        writesAcked += op.ids.length;
        delete inFlight[c];
      }
    };

    const payloadOf = async (id: number) => {
      const r = await call('GET', `${base}/payload/${id}`);
      if (r.status === 404) return null;
      expect(r.status).toBe(200);
      return r.body.metadata as Meta;
    };
    const matches = (meta: Meta | null, s: State) => (s.live ? meta !== null && meta.c === s.meta.c && meta.v === s.meta.v && meta.round === s.meta.round : meta === null);

    const check = async (label: string, inFlight: InFlight[]) => {
      // A cut request: every one of its ids shows the new state, or every one the old.
      for (const op of inFlight.filter(Boolean)) {
        const seen = await Promise.all(op.ids.map(payloadOf));
        const applied = seen.map((m, i) => matches(m, op.next[i]!));
        const before = seen.map((m, i) => matches(m, stateOf(op.ids[i]!)));
        if (applied.every(Boolean)) op.ids.forEach((id, i) => record(id, op.next[i]!));
        else if (!before.every(Boolean)) {
          halfApplied++;
          problems.push(`${label}: a ${op.kind} of ${op.ids.length} ids was half applied`);
          op.ids.forEach((id, i) => record(id, applied[i] ? op.next[i]! : stateOf(id)));
        }
      }
      const ids = [...acked.keys()];
      await eachLimited(ids, 16, async (id) => {
        const s = acked.get(id)!;
        checked++;
        if (!matches(await payloadOf(id), s)) {
          lost++;
          if (problems.length < 20) problems.push(`${label}: id ${id} should be ${s.live ? `live v${s.meta.v}` : 'deleted'}`);
        }
      });
      const live = new Map<number, number[]>();
      for (const [id, s] of acked) if (s.live) live.set(id, s.vec);
      const stats = await call('GET', `${base}/stats`);
      expect(stats.body.vector_count, `${label}: vector_count`).toBe(live.size);
      // Searchable: live ids find themselves with their metadata, deleted ids never come back.
      const sample = (xs: number[], n: number) => Array.from({ length: Math.min(n, xs.length) }, () => xs[Math.floor(rand() * xs.length)]!);
      for (const id of sample([...live.keys()], 40)) {
        const r = await call('POST', `${base}/search`, { query: live.get(id), top_k: 1 });
        expect(r.body.results[0]?.id, `${label}: live id ${id} by search`).toBe(id);
        expect(r.body.results[0]?.metadata).toEqual((acked.get(id) as Extract<State, { live: true }>).meta);
      }
      const deleted = ids.filter((id) => !acked.get(id)!.live && lastVector.has(id));
      for (const id of sample(deleted, 40)) {
        const r = await call('POST', `${base}/search`, { query: lastVector.get(id), top_k: 10 });
        expect(r.body.results.map((x: { id: number }) => x.id), `${label}: deleted id ${id} by search`).not.toContain(id);
      }
      // The index over the recovered rows answers as exact search does, probing every list.
      for (let q = 0; q < 5; q++) {
        const query = vector();
        const r = await call('POST', `${base}/search`, { query, top_k: 10, nprobe_override: 1_000_000 });
        expectExactTop10(r.body.results, live, query, label, (id) => ` (${JSON.stringify(acked.get(id) && (acked.get(id) as { meta?: Meta }).meta)})`);
      }
    };

    try {
      for (let round = 0; round < KILLS; round++) {
        const inFlight: InFlight[] = [];
        const loops = Array.from({ length: CLIENTS }, (_, c) => clientLoop(c, round, inFlight));
        await sleep(300 + rand() * 1200);
        await svc.stop('SIGKILL');
        await Promise.all(loops);
        svc = await serve(dir);
        await check(`kill ${round + 1}`, inFlight);
      }
    } finally {
      await svc.stop('SIGTERM');
    }
    report({
      scenario: 'writes',
      seed,
      kills: KILLS,
      acknowledgedChecked: checked,
      lost,
      stuck: 0,
      details: { 'writes acknowledged (ids)': writesAcked, 'ids tracked': acked.size, 'cut batches half applied': halfApplied },
      seconds: (Date.now() - started) / 1000,
    });
    expect(problems).toEqual([]);
    expect(lost).toBe(0);
    expect(halfApplied).toBe(0);
    expect(writesAcked).toBeGreaterThan(KILLS * 100);
  }, 60_000 + KILLS * 60_000);
});
