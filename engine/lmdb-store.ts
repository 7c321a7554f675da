/**
 * The LMDB layout: the source of truth for the catalog, vectors, metadata, partitions and
 * tombstones. Index snapshots are files beside it and can always be rebuilt from here.
 *
 *   catalog   name                 -> DatasetManifest
 *   vectors   [uid, id]            -> float32 bytes (normalisation happens in the core)
 *   meta      [uid, id]            -> metadata object (absent when empty)
 *   parts     [uid, pid]           -> PartitionRecord
 *   partIds   [uid, pid]           -> float64 bytes: the ids of a sealed partition (raw, so a
 *                                     large list grows no encoder buffer that stays allocated)
 *   pending   [uid, pid]           -> id...  (rows of partitions not sealed yet; duplicate-sorted,
 *                                            so sealing drops a partition's list without reading it)
 *   tombs     [uid, pid, id]       -> true   (rows deleted from sealed or sealing partitions)
 *   dict      [uid, column, value] -> code   (string dictionary of filter columns)
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Metadata, PromotionPolicy, SlaConfig, Tuning } from './types.js';
import type { ColumnType, IndexType, Metric } from './vocabulary.js';

/** A dataset as the engine catalog keeps it (the `catalog` db). */
export interface DatasetManifest {
  uid: number;
  name: string;
  dim: number;
  metric: Metric;
  indexType: IndexType;
  tuning: Tuning;
  promotion: PromotionPolicy;
  sla: SlaConfig | null;
  columns: Record<string, ColumnType>;
  nextPartition: number;
  createdAt: string;
}

export interface PartitionRecord {
  pid: number;
  state: 'growing' | 'sealed';
  /** Snapshot file name (in the segments folder) of a sealed partition. */
  snapshot?: string;
  /**
   * The checksum its save answered: a valid snapshot of another partition (copied or restored
   * over this one) or an older one is refused and rebuilt. Records written before it have none.
   */
  checksum?: string;
  /**
   * A bulk load's gathering partition (state growing, its rows in `pending`; engine/dataset/
   * bulk-load.ts): after a restart it is sealed, never taken for the growing partition.
   */
  gathering?: true;
  /** Ids of a sealed partition as float64 bytes, in records written before `partIds` existed. */
  ids?: Uint8Array;
  createdAt: number;
  /**
   * Rows its index was trained on: it takes rows without training again up to EXTEND_FACTOR
   * times that (compaction.ts). Absent in records of partitions indexed as sealed: their rows.
   */
  trainedRows?: number;
}

export type Key = (string | number)[];

export class LmdbStore {
  readonly root: RootDatabase;
  readonly catalog: Database<DatasetManifest, string>;
  readonly vectors: Database<Uint8Array, Key>;
  readonly meta: Database<Metadata, Key>;
  readonly parts: Database<PartitionRecord, Key>;
  readonly partIds: Database<Uint8Array, Key>;
  readonly pending: Database<number, Key>;
  readonly tombs: Database<true, Key>;
  readonly dict: Database<number, Key>;
  readonly segmentsDir: string;
  readonly durable: boolean;
  private readonly dir: string;

  private constructor(dir: string, durable: boolean) {
    this.dir = dir;
    this.durable = durable;
    this.segmentsDir = join(dir, 'segments');
    mkdirSync(this.segmentsDir, { recursive: true });
    this.root = open({ path: join(dir, 'sable.mdb'), maxDbs: 16, noSync: !durable, compression: false });
    this.catalog = this.root.openDB({ name: 'catalog' });
    this.vectors = this.root.openDB({ name: 'vectors', encoding: 'binary' });
    this.meta = this.root.openDB({ name: 'meta' });
    this.parts = this.root.openDB({ name: 'parts' });
    this.partIds = this.root.openDB({ name: 'partIds', encoding: 'binary' });
    // One key per partition with its ids as sorted duplicates: deleting the key frees the leaf
    // pages without reading them. (A key per row made sealing read every leaf, and the kernel's
    // fault-around mapped the whole file into RSS with them.)
    this.pending = this.root.openDB({ name: 'pending', dupSort: true, encoding: 'ordered-binary' });
    this.tombs = this.root.openDB({ name: 'tombs' });
    this.dict = this.root.openDB({ name: 'dict' });
  }

  /** A durable store in `dir`, or (no dir) a scratch one deleted on close. */
  static open(dir?: string): LmdbStore {
    if (dir) {
      mkdirSync(dir, { recursive: true });
      return new LmdbStore(dir, true);
    }
    return new LmdbStore(mkdtempSync(join(tmpdir(), 'sable-mem-')), false);
  }

  /** Inside a write transaction: records a sealed partition and the ids it holds. */
  putSealed(uid: number, record: PartitionRecord, ids: Float64Array): void {
    this.parts.put([uid, record.pid], record);
    this.partIds.put([uid, record.pid], new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength));
  }

  /** Inside a write transaction: forgets a partition's record and id list. */
  removePartition(uid: number, pid: number): void {
    this.parts.remove([uid, pid]);
    this.partIds.remove([uid, pid]);
  }

  /** The ids a sealed partition holds. */
  sealedIds(uid: number, record: PartitionRecord): Float64Array {
    const bytes = this.partIds.get([uid, record.pid]) ?? record.ids;
    return bytes ? bytesToFloat64(bytes) : new Float64Array(0);
  }

  snapshotPath(file: string): string {
    return join(this.segmentsDir, file);
  }

  /** Runs `fn` in one write transaction; resolves once it is committed. */
  write<T>(fn: () => T): Promise<T> {
    return this.root.transaction(fn);
  }

  /** Deletes every key of `db` in [prefix, prefix+) (inside a transaction). */
  removeRange(db: Database<unknown, Key>, prefix: Key): void {
    for (const key of db.getKeys({ start: prefix, end: [...prefix, MAX_KEY] })) db.remove(key);
  }

  keys(db: Database<unknown, Key>, prefix: Key): Iterable<Key> {
    return db.getKeys({ start: prefix, end: [...prefix, MAX_KEY] });
  }

  async close(): Promise<void> {
    await this.root.close();
    if (!this.durable) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Sorts after every number and string element of an ordered-binary key. */
const MAX_KEY = '\uffff\uffff';

export function vectorBytes(v: Float32Array): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

export function bytesToFloat32(b: Uint8Array): Float32Array {
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

export function bytesToFloat64(b: Uint8Array): Float64Array {
  const out = new Float64Array(b.byteLength / 8);
  new Uint8Array(out.buffer).set(b);
  return out;
}
