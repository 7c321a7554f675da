/**
 * Snapshots of shard replicas in object storage (design: ../shared/design/cluster.md §3.5), on
 * `shard_snapshots` of migration 0007.
 *
 * A snapshot is every live row of one replica as of one seq of its shard's log, so a new replica
 * loads it and applies only the log after that seq, and the log can be cut: once a shard has two
 * snapshots, the entries up to the older one's seq go, with the snapshots before it. Two are kept
 * so a replica a little behind the newest still catches up by log delta, and so a snapshot being
 * loaded is not deleted under its reader by the next one.
 *
 * The object is a file of frames, each a u32 little-endian length and its bytes: first a msgpack
 * header (what it holds), then upserts of at most FRAME_ROWS rows in the vector log's own entry
 * encoding (cluster/log-entry.ts), so loading a snapshot is applying log entries. Its sha256 is
 * kept in the row and checked before a byte of it is applied. Rows are exported, not the index:
 * the loading replica builds its index as any write would (the engine's snapshot files are
 * tied to one LMDB environment's partition ids).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import { Packr } from 'msgpackr';
import type { Dataset } from '../engine/index.js';
import { withTransaction, type Pool } from '../outbound/postgres/pool.js';
import { decodeEntry, encodeEntry } from './log-entry.js';
import { applyEntry, datasetTag } from './shard-log.js';

const MAGIC = Buffer.from('SABLSNP1');
const FRAME_ROWS = 4096;
const packr = new Packr({ useRecords: false, int64AsType: 'number' });

export interface SnapshotHeader {
  dataset: string;
  shard: number;
  /** The last log seq the rows reflect. */
  seq: number;
  dim: number;
  rows: number;
}

export interface SnapshotRow {
  dataset: string;
  shard: number;
  seq: number;
  key: string;
  rows: number;
  bytes: number;
  sha256: string;
  node: string;
}

/** Where a new snapshot of the shard goes: a fresh key, so an upload never replaces one being read. */
export function snapshotKey(dataset: string, shard: number, seq: number): string {
  return `cluster/snapshots/${datasetTag(dataset)}/${shard}/${seq}-${randomUUID()}.snap`;
}

/**
 * Writes every live row of `ds` to `path`. The caller holds the replica still (no entry applied
 * meanwhile): the rows are those of `seq`, and the ids are taken in one synchronous step.
 */
export async function exportRows(ds: Dataset, path: string, dataset: string, shard: number, seq: number): Promise<{ rows: number; bytes: number; sha256: string }> {
  const ids = ds.matching(undefined, undefined, Number.MAX_SAFE_INTEGER).ids;
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  let bytes = 0;
  const write = async (body: Uint8Array) => {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(body.byteLength);
    for (const part of [len, body]) {
      hash.update(part);
      bytes += part.byteLength;
      if (!out.write(part)) await once(out, 'drain');
    }
  };
  try {
    hash.update(MAGIC);
    bytes += MAGIC.byteLength;
    out.write(MAGIC);
    const header: SnapshotHeader = { dataset, shard, seq, dim: ds.dim, rows: ids.length };
    await write(packr.pack(header));
    for (let at = 0; at < ids.length; at += FRAME_ROWS) {
      const part = ids.subarray(at, Math.min(ids.length, at + FRAME_ROWS));
      const vectors = new Float32Array(part.length * ds.dim);
      const metadata: (Record<string, unknown> | null)[] = [];
      part.forEach((id, k) => {
        const v = ds.getVector(id);
        if (!v) throw new Error(`snapshot of shard ${shard} of '${dataset}': row ${id} vanished while the replica was held still`);
        vectors.set(v, k * ds.dim);
        metadata.push(ds.getMetadata(id) ?? null);
      });
      await write(encodeEntry({ op: 'upsert', ids: Float64Array.from(part), vectors, dim: ds.dim, metadata }));
    }
    out.end();
    await once(out, 'finish');
  } catch (err) {
    out.destroy();
    throw err;
  }
  return { rows: ids.length, bytes, sha256: hash.digest('hex') };
}

/** The sha256 of a file, streamed. */
async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Loads a snapshot file into an empty dataset, after checking it is the one the row names
 * (checksum, shard, seq, dim): a corrupt or foreign object is refused before anything is applied.
 */
export async function importRows(path: string, ds: Dataset, expected: SnapshotRow): Promise<number> {
  const sha = await fileSha256(path);
  if (sha !== expected.sha256) throw new Error(`snapshot ${expected.key}: checksum ${sha} is not the recorded ${expected.sha256}`);
  const file = await open(path, 'r');
  try {
    let pos = 0;
    const read = async (n: number): Promise<Buffer> => {
      const buf = Buffer.alloc(n);
      const { bytesRead } = await file.read(buf, 0, n, pos);
      if (bytesRead !== n) throw new Error(`snapshot ${expected.key}: truncated at byte ${pos}`);
      pos += n;
      return buf;
    };
    const frame = async () => read((await read(4)).readUInt32LE(0));
    if (!(await read(MAGIC.byteLength)).equals(MAGIC)) throw new Error(`snapshot ${expected.key}: not a Sable shard snapshot`);
    const header = packr.unpack(await frame()) as SnapshotHeader;
    if (header.dataset !== expected.dataset || header.shard !== expected.shard || header.seq !== expected.seq || header.dim !== ds.dim) {
      throw new Error(`snapshot ${expected.key}: holds shard ${header.shard} of '${header.dataset}' at seq ${header.seq} (dim ${header.dim}), not what its row says`);
    }
    let rows = 0;
    while (rows < header.rows) {
      const entry = decodeEntry(await frame());
      rows += await applyEntry(ds, entry);
    }
    return rows;
  } finally {
    await file.close();
  }
}

/** The shard's newest snapshot, or null. */
export async function newestSnapshot(pool: Pool, dataset: string, shard: number): Promise<SnapshotRow | null> {
  const { rows } = await pool.query(
    'SELECT seq, object_key, rows, bytes, sha256, node FROM shard_snapshots WHERE dataset = $1 AND shard = $2 ORDER BY seq DESC LIMIT 1',
    [dataset, shard],
  );
  const r = rows[0];
  if (!r) return null;
  return { dataset, shard, seq: Number(r.seq), key: r.object_key, rows: Number(r.rows), bytes: Number(r.bytes), sha256: r.sha256, node: r.node };
}

/**
 * Records an uploaded snapshot and cuts the shard's log: the entries up to the second-newest
 * snapshot's seq are deleted with every snapshot older than it, in one transaction. Resolves with
 * the object keys no row names any more, the snapshots removed and the bulk entries cut (the
 * caller deletes the objects), and the log rows cut.
 * A snapshot at a seq that already has one (taken by another node) is not recorded: `recorded`
 * is false and the caller deletes its own object.
 */
export async function recordSnapshot(pool: Pool, s: SnapshotRow): Promise<{ recorded: boolean; removedKeys: string[]; cutEntries: number }> {
  return withTransaction(pool, async (client) => {
    const ins = await client.query(
      `INSERT INTO shard_snapshots (dataset, shard, seq, object_key, rows, bytes, sha256, node) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (dataset, shard, seq) DO NOTHING`,
      [s.dataset, s.shard, s.seq, s.key, s.rows, s.bytes, s.sha256, s.node],
    );
    if (ins.rowCount !== 1) return { recorded: false, removedKeys: [], cutEntries: 0 };
    const second = await client.query<{ seq: string }>(
      'SELECT seq FROM shard_snapshots WHERE dataset = $1 AND shard = $2 ORDER BY seq DESC OFFSET 1 LIMIT 1',
      [s.dataset, s.shard],
    );
    if (!second.rows[0]) return { recorded: true, removedKeys: [], cutEntries: 0 };
    const keepFrom = Number(second.rows[0].seq);
    const cut = await client.query<{ blob_key: string | null }>('DELETE FROM vector_log WHERE dataset = $1 AND shard = $2 AND seq <= $3 RETURNING blob_key', [s.dataset, s.shard, keepFrom]);
    const gone = await client.query<{ object_key: string }>(
      'DELETE FROM shard_snapshots WHERE dataset = $1 AND shard = $2 AND seq < $3 RETURNING object_key',
      [s.dataset, s.shard, keepFrom],
    );
    const blobs = cut.rows.flatMap((r) => (r.blob_key ? [r.blob_key] : []));
    return { recorded: true, removedKeys: [...gone.rows.map((r) => r.object_key), ...blobs], cutEntries: cut.rowCount ?? 0 };
  });
}
