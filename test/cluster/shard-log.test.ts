// The per-shard vector log of cluster mode (cluster/shard-log.ts) on a real PostgreSQL
// (testkit/postgres.ts): the entry codec, appends from concurrent writers giving dense seqs
// per shard, idempotent retries by request id, and tailers applying every entry exactly once, in
// order, into an embedded dataset (design: ../shared/design/cluster.md §3.3, §3.5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { shardOf } from '../../dist/catalog/placement/shard-of.js';
import { migrate } from '../../dist/outbound/postgres/migrations.js';
import { openPool, type Pool } from '../../dist/outbound/postgres/pool.js';
import {
  LogTailer,
  appendWrite,
  applyEntry,
  createShards,
  decodeEntry,
  encodeEntry,
  logChannel,
  readLog,
  type LogEntry,
  type LogRecord,
} from '../../dist/cluster/shard-log.js';
import { Notifications } from '../../dist/cluster/notifications.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';

let server: LocalPostgres;
let pool: Pool;
let notifications: Notifications;
const DIM = 8;

beforeAll(async () => {
  server = await startPostgres();
  pool = openPool(server.url, { max: 8 });
  await migrate(pool);
  notifications = new Notifications(server.url);
}, 60_000);

afterAll(async () => {
  await notifications?.close();
  await pool?.end();
  await server?.stop();
});

function vectorsFor(ids: number[]): Float32Array {
  const v = new Float32Array(ids.length * DIM);
  ids.forEach((id, k) => {
    for (let j = 0; j < DIM; j++) v[k * DIM + j] = Math.sin(id * 7 + j) + 0.01 * j;
  });
  return v;
}

function upsert(ids: number[]): LogEntry {
  return { op: 'upsert', ids: Float64Array.from(ids), vectors: vectorsFor(ids), dim: DIM, metadata: ids.map((id) => (id % 3 === 0 ? null : { n: id, tag: `t${id % 5}` })) };
}

async function heads(dataset: string) {
  const { rows } = await pool.query<{ shard: number; last_seq: string }>('SELECT shard, last_seq FROM shard_heads WHERE dataset = $1 ORDER BY shard', [dataset]);
  return rows.map((r) => Number(r.last_seq));
}

async function seqsOf(dataset: string, shard: number): Promise<number[]> {
  const { rows } = await pool.query<{ seq: string }>('SELECT seq FROM vector_log WHERE dataset = $1 AND shard = $2 ORDER BY seq', [dataset, shard]);
  return rows.map((r) => Number(r.seq));
}

describe('the log entry codec', () => {
  it('round-trips an upsert (ids, vectors, metadata with nulls) and a delete', () => {
    const ids = [1, 2 ** 40 + 3, 77, Number.MAX_SAFE_INTEGER];
    const up = upsert(ids);
    const back = decodeEntry(encodeEntry(up));
    expect(back.op).toBe('upsert');
    if (back.op !== 'upsert' || up.op !== 'upsert') throw new Error('op');
    expect(Array.from(back.ids)).toEqual(ids);
    expect(back.ids).toBeInstanceOf(Float64Array);
    expect(back.vectors).toBeInstanceOf(Float32Array);
    expect(Array.from(back.vectors)).toEqual(Array.from(up.vectors));
    expect(back.dim).toBe(DIM);
    expect(back.metadata).toEqual(up.metadata);

    const noMeta = decodeEntry(encodeEntry({ op: 'upsert', ids: Float64Array.of(5), vectors: vectorsFor([5]), dim: DIM }));
    expect(noMeta).toMatchObject({ op: 'upsert', dim: DIM });
    expect((noMeta as { metadata?: unknown }).metadata).toBeUndefined();

    const del = decodeEntry(encodeEntry({ op: 'delete', ids: Float64Array.of(9, 2 ** 33) }));
    expect(del.op).toBe('delete');
    expect(Array.from(del.ids)).toEqual([9, 2 ** 33]);
    // Vectors of the wrong length are refused.
    expect(() => encodeEntry({ op: 'upsert', ids: Float64Array.of(1, 2), vectors: new Float32Array(DIM), dim: DIM })).toThrow(/need 16 values/);
  });

  it('names a short channel per dataset, whatever the length of its name', () => {
    expect(logChannel('x'.repeat(500))).toMatch(/^sable_log_[0-9a-f]{16}$/);
    expect(logChannel('a')).not.toBe(logChannel('b'));
  });
});

describe('appendWrite', () => {
  it('gives 4 concurrent writers of 100 writes each dense seqs per shard (3 shards)', async () => {
    const ds = 'dense';
    await createShards(pool, ds, 3);
    await createShards(pool, ds, 3); // idempotent
    expect(await heads(ds)).toEqual([0, 0, 0]);
    const results = await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        const out: { shard: number; seq: number }[][] = [];
        for (let i = 0; i < 100; i++) {
          const base = (w * 100 + i) * 4;
          out.push(await appendWrite(pool, ds, 3, upsert([base + 1, base + 2, base + 3, base + 4]), `w${w}:${i}`));
        }
        return out;
      }),
    );
    const perShard: number[][] = [[], [], []];
    for (const writes of results) for (const appended of writes) for (const { shard, seq } of appended) perShard[shard]!.push(seq);
    const last = await heads(ds);
    for (let s = 0; s < 3; s++) {
      const sorted = [...perShard[s]!].sort((a, b) => a - b);
      expect(sorted).toEqual(Array.from({ length: sorted.length }, (_, i) => i + 1));
      expect(await seqsOf(ds, s)).toEqual(sorted);
      expect(last[s]).toBe(sorted.length);
    }
    // Every id landed in the entry of its shard.
    const records = await readLog(pool, ds, 1, 0, 10_000);
    for (const r of records) for (const id of r.entry!.ids) expect(shardOf(id, 3)).toBe(1);
  });

  it('returns the same seqs for a retried request id and adds nothing', async () => {
    const ds = 'retry';
    await createShards(pool, ds, 3);
    const write = upsert([10, 11, 12, 13, 14, 15]);
    const first = await appendWrite(pool, ds, 3, write, 'req-1');
    expect(first.length).toBeGreaterThan(1);
    const before = await heads(ds);
    expect(await appendWrite(pool, ds, 3, write, 'req-1')).toEqual(first);
    // Concurrent retries too.
    const again = await Promise.all([appendWrite(pool, ds, 3, write, 'req-1'), appendWrite(pool, ds, 3, write, 'req-1')]);
    expect(again).toEqual([first, first]);
    expect(await heads(ds)).toEqual(before);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM vector_log WHERE dataset = $1`, [ds]);
    expect(rows[0].n).toBe(first.length);
    // The next request follows without a gap.
    const next = await appendWrite(pool, ds, 3, { op: 'delete', ids: Float64Array.of(10, 11, 12, 13, 14, 15) }, 'req-2');
    for (const { shard, seq } of next) expect(seq).toBe(before[shard]! + 1);
  });
});

describe('LogTailer', () => {
  it('applies every entry exactly once in seq order, started before and after the writes, and resumes after a stop', async () => {
    const ds = 'tail';
    const SHARDS = 3;
    const SHARD = 0;
    await createShards(pool, ds, SHARDS);
    const engine = await Engine.open({});
    try {
      const early = await engine.createDataset({ name: 'early', dim: DIM });
      const late = await engine.createDataset({ name: 'late', dim: DIM });
      const resumed = await engine.createDataset({ name: 'resumed', dim: DIM });

      const seen = { early: [] as number[], late: [] as number[], resumed: [] as number[] };
      const applier = (name: keyof typeof seen, target: typeof early) => async (r: LogRecord) => {
        seen[name].push(r.seq);
        await applyEntry(target, r.entry!);
      };
      const tailer = (name: keyof typeof seen, target: typeof early, fromSeq: number) =>
        new LogTailer({ pool, notifications, dataset: ds, shard: SHARD, fromSeq, apply: applier(name, target), pollMs: 200 });

      const earlyTailer = tailer('early', early, 0);
      let resumedTailer = tailer('resumed', resumed, 0);

      // Writers: upserts of fresh ids and deletes of some earlier ones, over every shard.
      const expected = new Set<number>();
      let lastSeq = 0;
      let nextId = 1;
      const writes: Promise<void>[] = [];
      for (let w = 0; w < 3; w++) {
        writes.push(
          (async () => {
            for (let i = 0; i < 40; i++) {
              if (i % 5 === 4) {
                const victims = [...expected].filter((id) => id % 7 === w).slice(0, 3);
                if (victims.length === 0) continue;
                victims.forEach((id) => expected.delete(id));
                const out = await appendWrite(pool, ds, SHARDS, { op: 'delete', ids: Float64Array.from(victims) }, `d${w}:${i}`);
                lastSeq = Math.max(lastSeq, out.find((a) => a.shard === SHARD)?.seq ?? 0);
              } else {
                const ids = Array.from({ length: 6 }, () => nextId++);
                ids.forEach((id) => expected.add(id));
                const out = await appendWrite(pool, ds, SHARDS, upsert(ids), `u${w}:${i}`);
                lastSeq = Math.max(lastSeq, out.find((a) => a.shard === SHARD)?.seq ?? 0);
              }
              if (w === 0 && i === 15) {
                // Stop the resumed tailer mid-stream; restart it from what it applied.
                await resumedTailer.stop();
                expect(resumedTailer.error).toBeNull();
                const at = resumedTailer.applied;
                expect(seen.resumed).toEqual(Array.from({ length: at }, (_, k) => k + 1));
                resumedTailer = tailer('resumed', resumed, at);
              }
            }
          })(),
        );
      }
      await Promise.all(writes);
      const head = (await heads(ds))[SHARD]!;
      expect(head).toBeGreaterThanOrEqual(lastSeq);

      const lateTailer = tailer('late', late, 0);
      await Promise.all([earlyTailer.waitFor(head), lateTailer.waitFor(head), resumedTailer.waitFor(head)]);
      await Promise.all([earlyTailer.stop(), lateTailer.stop(), resumedTailer.stop()]);
      for (const t of [earlyTailer, lateTailer, resumedTailer]) expect(t.error).toBeNull();

      const dense = Array.from({ length: head }, (_, k) => k + 1);
      expect(seen.early).toEqual(dense);
      expect(seen.late).toEqual(dense);
      expect(seen.resumed).toEqual(dense);

      const want = [...expected].filter((id) => shardOf(id, SHARDS) === SHARD).sort((a, b) => a - b);
      expect(want.length).toBeGreaterThan(50);
      const everWritten = Array.from({ length: nextId - 1 }, (_, k) => k + 1).filter((id) => shardOf(id, SHARDS) === SHARD);
      for (const target of [early, late, resumed]) {
        const live = Array.from(target.matching(undefined, undefined, 100_000).ids).sort((a, b) => a - b);
        expect(live).toEqual(want);
        expect(everWritten.filter((id) => target.getVector(id) !== undefined)).toEqual(want);
        expect(Array.from(target.getVector(want[0]!)!)).toEqual(Array.from(vectorsFor([want[0]!])));
      }
    } finally {
      await engine.close();
    }
  }, 20_000);

  it('is woken by NOTIFY without waiting for its poll', async () => {
    const ds = 'notify';
    await createShards(pool, ds, 2);
    const applied: number[] = [];
    const t = new LogTailer({ pool, notifications, dataset: ds, shard: 1, fromSeq: 0, apply: async (r) => void applied.push(r.seq), pollMs: 60_000 });
    await new Promise((r) => setTimeout(r, 200)); // its first read done, LISTEN on
    const ids = Array.from({ length: 40 }, (_, i) => i + 1).filter((id) => shardOf(id, 2) === 1);
    for (let i = 0; i < 3; i++) await appendWrite(pool, ds, 2, upsert(ids.slice(i * 2, i * 2 + 2)), `n${i}`);
    await t.waitFor(3, 3_000);
    await t.stop();
    expect(applied).toEqual([1, 2, 3]);
    expect(t.error).toBeNull();
  });

  it('stops with an error on a gap in the seqs', async () => {
    const ds = 'gap';
    await createShards(pool, ds, 1);
    await appendWrite(pool, ds, 1, upsert([1]), 'a');
    // A gap cannot come from appendWrite: forge one.
    await pool.query(`UPDATE shard_heads SET last_seq = 3 WHERE dataset = $1`, [ds]);
    await pool.query(`INSERT INTO vector_log (dataset, shard, seq, op, body) VALUES ($1, 0, 3, 'delete', $2)`, [ds, Buffer.from(encodeEntry({ op: 'delete', ids: Float64Array.of(1) }))]);
    const applied: number[] = [];
    const t = new LogTailer({ pool, notifications, dataset: ds, shard: 0, fromSeq: 0, apply: async (r) => void applied.push(r.seq), pollMs: 50 });
    await expect(t.done).rejects.toThrow(/gap in the log of shard 0 of 'gap': seq 3 follows 1/);
    expect(applied).toEqual([1]);
    expect(t.applied).toBe(1);
    await t.stop();
  });
});
