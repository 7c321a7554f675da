/**
 * A dataset: partitions of native segments over one LMDB source of truth.
 *
 * Writes are serialised per dataset. Each write commits to LMDB first (the acknowledgement means
 * durable), then updates the in-memory segments: new rows go to the growing partition, replaced
 * and deleted rows are tombstoned where they lived. The promotion policy seals the growing
 * partition and indexes it in the background; compaction merges small partitions and drops
 * tombstones. Searches never wait for any of it.
 */
import { readdirSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { columnBatches, Dictionary, type ColumnContext } from './columns.js';
import { invalid, SableError } from './errors.js';
import { compileFilters } from './filters.js';
import { fuse, type FusedHit } from './hybrid.js';
import { KeywordIndex } from './keyword/bm25.js';
import { rebuildKeywordIndex } from './keyword/persist.js';
import { TEXT_FIELD } from './columns.js';
import { native, type ColumnType, type NativeQueryOptions, type NativeResult } from './native.js';
import { Partition } from './partition.js';
import { DEFAULT_SLA, SlaTuner } from './sla.js';
import {
  bytesToFloat32,
  vectorBytes,
  type DatasetRecord,
  type Key,
  type PartitionRecord,
  type Storage,
} from './storage.js';
import type {
  BatchSearchOptions,
  DatasetStats,
  Hit,
  IndexType,
  Metadata,
  PromotionPolicy,
  Receipt,
  Scalar,
  SearchOptions,
  SlaConfig,
  SlaStatus,
} from './types.js';

export const DEFAULT_PROMOTION: PromotionPolicy = { max_buffer_vectors: 50_000, max_buffer_age_ms: 10_000 };
const MAX_TOP_K = 10_000;
const REBUILD_CHUNK = 8192;

/** What a search needs to run anywhere (this thread or a worker): segment handles and options. */
export interface SearchPlan {
  handles: number[];
  options: NativeQueryOptions;
}

export class Dataset {
  private partitions: Partition[] = [];
  private growing!: Partition;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly background = new Set<Promise<unknown>>();
  private backgroundError: Error | null = null;
  private readonly ctx: ColumnContext;
  private readonly tuner: SlaTuner;
  private ageTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private compaction: { target: Partition; sources: Set<Partition> } | null = null;
  /** BM25 index over the `text` metadata, built on the first keyword search. */
  private keyword: KeywordIndex | null = null;
  private keywordBuild: Promise<KeywordIndex> | null = null;

  private constructor(
    private readonly storage: Storage,
    readonly record: DatasetRecord,
  ) {
    this.ctx = { types: record.columns, dictionaries: new Map() };
    this.tuner = new SlaTuner(record.sla);
  }

  get name(): string {
    return this.record.name;
  }
  get dim(): number {
    return this.record.dim;
  }
  get metric(): DatasetRecord['metric'] {
    return this.record.metric;
  }

  /** A new dataset whose record is already in the catalog. */
  static async create(storage: Storage, record: DatasetRecord): Promise<Dataset> {
    const ds = new Dataset(storage, record);
    await ds.startGrowing();
    ds.startAgeTimer();
    return ds;
  }

  /** Reopens a dataset: snapshots are loaded (rebuilt from LMDB when missing or corrupt). */
  static async open(storage: Storage, record: DatasetRecord): Promise<Dataset> {
    const ds = new Dataset(storage, record);
    await ds.load();
    ds.startAgeTimer();
    return ds;
  }

  // ---------------------------------------------------------------- writes

  /** Inserts or replaces vectors; resolves once they are durable and searchable. */
  async upsert(ids: number[] | Float64Array, vectors: Float32Array, metadata?: (Metadata | undefined | null)[]): Promise<{ upserted: number }> {
    this.checkOpen();
    if (!Array.isArray(ids) && !(ids instanceof Float64Array)) throw invalid('ids must be an array of integers');
    if (!(vectors instanceof Float32Array)) throw invalid('vectors must be a Float32Array');
    if (vectors.length !== ids.length * this.dim) {
      throw invalid(`vectors hold ${vectors.length} values; ${ids.length} ids of dimension ${this.dim} need ${ids.length * this.dim}`);
    }
    if (metadata !== undefined && (!Array.isArray(metadata) || metadata.length !== ids.length)) {
      throw invalid('metadata must be an array with one entry per id');
    }
    for (const id of ids) {
      if (!Number.isSafeInteger(id)) throw invalid(`id ${String(id)} is not a safe integer`);
    }
    for (let i = 0; i < vectors.length; i++) {
      if (!Number.isFinite(vectors[i])) throw invalid(`vector ${ids[Math.floor(i / this.dim)]} holds a non-finite value`);
    }
    metadata?.forEach((m, i) => checkMetadata(ids[i], m));
    return this.exclusive(() => this.upsertLocked(ids, vectors, metadata ?? []));
  }

  /** Deletes vectors by id; resolves with how many existed. */
  async delete(ids: number[]): Promise<number> {
    this.checkOpen();
    if (!Array.isArray(ids)) throw invalid('ids must be an array of integers');
    for (const id of ids) if (!Number.isSafeInteger(id)) throw invalid(`id ${String(id)} is not a safe integer`);
    return this.exclusive(async () => {
      const unique = Float64Array.from(new Set(ids));
      const located = this.locate(unique);
      await this.storage.write(() => {
        for (const id of unique) {
          this.storage.vectors.remove([this.record.uid, id]);
          this.storage.meta.remove([this.record.uid, id]);
        }
        this.recordRemovals(located, unique, null);
      });
      if (this.keyword) for (const id of unique) this.keyword.remove(id);
      return this.applyRemovals(located, unique);
    });
  }

  /** Every upserted vector is indexed and durable when this resolves. */
  async flush(): Promise<void> {
    this.checkOpen();
    await this.exclusive(() => this.promoteLocked());
    await this.settle();
  }

  private async upsertLocked(ids: number[] | Float64Array, vectors: Float32Array, metadata: (Metadata | undefined | null)[]) {
    // The last occurrence of an id in one call wins, as successive calls would.
    const last = new Map<number, number>();
    ids.forEach((id, i) => last.set(id, i));
    let keep: number[] | null = null;
    if (last.size !== ids.length) keep = [...last.values()].sort((a, b) => a - b);
    const n = keep ? keep.length : ids.length;
    const idArray = new Float64Array(n);
    let rows = vectors;
    const metas: (Metadata | undefined)[] = new Array(n);
    if (keep) {
      rows = new Float32Array(n * this.dim);
      keep.forEach((src, i) => {
        idArray[i] = ids[src];
        rows.set(vectors.subarray(src * this.dim, (src + 1) * this.dim), i * this.dim);
        metas[i] = metadata[src] ?? undefined;
      });
    } else {
      for (let i = 0; i < n; i++) {
        idArray[i] = ids[i];
        metas[i] = metadata[i] ?? undefined;
      }
    }

    const located = this.locate(idArray);
    const columns = columnBatches(this.ctx, metas);
    const growing = this.growing;
    const uid = this.record.uid;
    await this.storage.write(() => {
      for (let i = 0; i < n; i++) {
        const id = idArray[i];
        this.storage.vectors.put([uid, id], vectorBytes(rows.subarray(i * this.dim, (i + 1) * this.dim)));
        const m = metas[i];
        if (m && Object.keys(m).length > 0) this.storage.meta.put([uid, id], m);
        else this.storage.meta.remove([uid, id]);
        this.storage.pending.put([uid, growing.pid], id);
      }
      this.recordRemovals(located, idArray, growing);
      if (columns.newTypes.length > 0) this.storage.catalog.put(this.name, this.record);
      for (const [column, value, code] of columns.newCodes) this.storage.dict.put([uid, column, value], code);
    });
    this.applyRemovals(located, idArray);
    native.segmentAppend(growing.handle, idArray, rows, columns.batches);
    if (this.keyword) {
      for (let i = 0; i < n; i++) {
        const text = metas[i]?.[TEXT_FIELD];
        if (typeof text === 'string' && text !== '') this.keyword.add(idArray[i], text);
        else this.keyword.remove(idArray[i]);
      }
    }
    growing.firstWriteAt ??= Date.now();
    if (growing.rows >= this.record.promotion.max_buffer_vectors) await this.promoteLocked();
    return { upserted: n };
  }

  /** For each partition (and a compaction target), which of `ids` it holds now. */
  private locate(ids: Float64Array): { partition: Partition; mask: Uint8Array }[] {
    const all = [...this.partitions];
    if (this.compaction) all.push(this.compaction.target);
    return all.map((partition) => ({ partition, mask: native.segmentContains(partition.handle, ids) }));
  }

  /**
   * Inside the write transaction that acknowledges a delete or a replacement: the id leaves the
   * LMDB membership of every partition that holds it. That membership is what a partition is
   * after a restart: a partition not sealed yet holds its `pending` ids, a sealed one the ids
   * recorded at its seal minus its `tombs`. So a growing partition loses the pending entry, and
   * any other (sealing, sealed, being rebuilt, a compaction's target) gets a tombstone, plus the
   * pending entry's removal while its seal has not committed.
   */
  private recordRemovals(located: { partition: Partition; mask: Uint8Array }[], ids: Float64Array, rewrittenIn: Partition | null) {
    const uid = this.record.uid;
    for (const { partition, mask } of located) {
      for (let i = 0; i < ids.length; i++) {
        if (!mask[i]) continue;
        if (partition.state === 'growing') {
          // A rewrite into the same growing partition keeps its membership key.
          if (partition !== rewrittenIn) this.storage.pending.remove([uid, partition.pid], ids[i]);
        } else {
          this.storage.tombs.put([uid, partition.pid, ids[i]], true);
          if (partition.state === 'sealing') this.storage.pending.remove([uid, partition.pid], ids[i]);
        }
      }
    }
  }

  private applyRemovals(located: { partition: Partition; mask: Uint8Array }[], ids: Float64Array): number {
    const removed = new Set<number>();
    for (const { partition, mask } of located) {
      const hit: number[] = [];
      for (let i = 0; i < ids.length; i++) if (mask[i]) hit.push(ids[i]);
      if (hit.length === 0) continue;
      native.segmentRemove(partition.handle, Float64Array.from(hit));
      if (partition !== this.compaction?.target) for (const id of hit) removed.add(id);
    }
    return removed.size;
  }

  // ---------------------------------------------------------------- partitions

  private async startGrowing(): Promise<void> {
    const pid = this.record.nextPartition++;
    const rec: PartitionRecord = { pid, state: 'growing', createdAt: Date.now() };
    await this.storage.write(() => {
      this.storage.catalog.put(this.name, this.record);
      this.storage.parts.put([this.record.uid, pid], rec);
    });
    this.growing = new Partition(pid, native.segmentCreate(this.dim, this.metric, this.growingReserve()), 'growing');
    this.partitions.push(this.growing);
  }

  /** Freezes the growing partition (when it has rows) and indexes it in the background. */
  private async promoteLocked(): Promise<void> {
    const old = this.growing;
    if (old.rows === 0) return;
    native.segmentSeal(old.handle);
    old.state = 'sealing';
    await this.startGrowing();
    this.track(this.seal(old));
  }

  /**
   * Index builds of this dataset run one after another: each already uses every core, and a
   * sealed partition waiting for its turn holds only its rows, where one building also holds
   * its training scratch (a bulk load seals a partition every few seconds).
   */
  private buildInTurn(handle: number): Promise<void> {
    const turn = this.buildQueue.then(() => native.segmentBuild(handle, this.record.indexType, this.buildOptions()));
    this.buildQueue = turn.catch(() => {});
    return turn;
  }

  private buildQueue: Promise<void> = Promise.resolve();
  private readonly buildHolds = new Set<() => void>();

  /**
   * Defers this dataset's index builds until the returned function is called: a bulk load seals
   * a partition every few seconds, and its builds would take the CPU the load needs; they run
   * after it, one at a time. Builds already started finish; searches answer meanwhile (exact
   * over partitions not built yet); close() lifts every hold.
   */
  holdBuilds(): () => void {
    let lift!: () => void;
    const held = new Promise<void>((resolve) => (lift = resolve));
    this.buildQueue = this.buildQueue.then(() => held);
    const release = () => {
      this.buildHolds.delete(release);
      lift();
    };
    this.buildHolds.add(release);
    return release;
  }

  /**
   * Rows to reserve in a new growing partition: what the promotion policy lets it reach, up to
   * 256 MB of float rows. Appending then copies each row once, where a growing array copied
   * everything at each doubling (a third of a bulk load's time on the service's thread).
   */
  private growingReserve(): number {
    return Math.min(this.record.promotion.max_buffer_vectors, Math.floor((256 * 2 ** 20) / (4 * this.dim)));
  }

  private buildOptions() {
    const t = this.record.tuning;
    return { nlist: t.nlist, m: t.m, efConstruction: t.ef_construction };
  }

  private async seal(p: Partition): Promise<void> {
    // At once, not in the build queue: a partition waiting its turn then holds half the memory.
    await native.segmentCompactRows(p.handle, this.record.indexType);
    p.built = false;
    await this.buildInTurn(p.handle);
    p.built = true;
    const snapshot = await this.saveSnapshot(p);
    const ids = native.segmentLiveIds(p.handle);
    await this.storage.write(() => {
      this.storage.putSealed(this.record.uid, { pid: p.pid, state: 'sealed', snapshot, createdAt: Date.now() }, ids);
      this.storage.pending.remove([this.record.uid, p.pid]);
    });
    p.state = 'sealed';
    this.builtAt = new Date().toISOString();
  }

  /** When the last index build finished (null before any). */
  private builtAt: string | null = null;

  private async saveSnapshot(p: Partition): Promise<string | undefined> {
    if (!this.storage.durable) return undefined;
    const file = `${this.record.uid}-${p.pid}.seg`;
    await native.segmentSave(p.handle, this.storage.snapshotPath(file));
    return file;
  }

  private track(work: Promise<unknown>): void {
    const p = work.catch((e: Error) => {
      this.backgroundError = e;
    });
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }

  /** Waits for background seals and builds; rethrows the first failure. */
  private async settle(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
    if (this.backgroundError) {
      const e = this.backgroundError;
      this.backgroundError = null;
      throw e;
    }
  }

  private startAgeTimer(): void {
    const every = Math.max(50, Math.min(1000, this.record.promotion.max_buffer_age_ms / 4));
    this.ageTimer = setInterval(() => {
      const since = this.growing.firstWriteAt;
      if (since !== null && Date.now() - since >= this.record.promotion.max_buffer_age_ms) {
        void this.exclusive(() => this.promoteLocked()).catch((e: Error) => (this.backgroundError = e));
      }
    }, every);
    this.ageTimer.unref();
  }

  private async load(): Promise<void> {
    const uid = this.record.uid;
    for (const { key, value } of this.storage.dict.getRange({ start: [uid], end: [uid, '\uffff'] })) {
      const [, column, str] = key as [number, string, string];
      let d = this.ctx.dictionaries.get(column);
      if (!d) this.ctx.dictionaries.set(column, (d = new Dictionary()));
      d.restore(str, value);
    }
    const records = [...this.storage.parts.getRange({ start: [uid], end: [uid, '\uffff'] })].map((e) => e.value);
    await this.dropOrphans(records);
    const growingRecords = records.filter((r) => r.state === 'growing');
    for (const rec of records) {
      if (rec.state === 'sealed') {
        this.partitions.push(new Partition(rec.pid, await this.openSealed(rec), 'sealed'));
      } else {
        const p = new Partition(rec.pid, native.segmentCreate(this.dim, this.metric, this.growingReserve()), 'growing');
        await this.appendFromStorage(p.handle, [...this.storage.pending.getValues([uid, rec.pid])]);
        this.partitions.push(p);
      }
    }
    const sealedTimes = records.filter((r) => r.state === 'sealed').map((r) => r.createdAt);
    if (sealedTimes.length > 0) this.builtAt = new Date(Math.max(...sealedTimes)).toISOString();
    const current = growingRecords.at(-1);
    if (current) {
      this.growing = this.partitions.find((p) => p.pid === current.pid)!;
      if (this.growing.rows > 0) this.growing.firstWriteAt = Date.now();
    } else {
      await this.startGrowing();
    }
    // Partitions frozen before the process stopped finish sealing now.
    for (const p of this.partitions) {
      if (p.state === 'growing' && p !== this.growing) {
        native.segmentSeal(p.handle);
        p.state = 'sealing';
        this.track(this.seal(p));
      }
    }
  }

  /**
   * A sealed partition holds exactly its members (see `members`); its snapshot is a cache of
   * them. A snapshot row outside the members is not served (format 2 snapshots kept rows deleted
   * while their partition was growing, and brought them back after a restart); a member the
   * snapshot lacks means the snapshot is wrong, and it is rebuilt from LMDB.
   */
  private async openSealed(rec: PartitionRecord): Promise<number> {
    const uid = this.record.uid;
    const members = this.members(rec);
    const loaded = await this.loadSnapshot(rec);
    if (loaded !== null) {
      const { removed, missing } = native.segmentReconcile(loaded, members);
      if (missing === 0) {
        this.repairedRows += removed;
        // A schema change retypes the columns in memory; a snapshot written before it is retyped here.
        const stale = this.staleColumns(loaded);
        if (stale) {
          const codes = this.columnsFromStorage(loaded);
          await this.storage.write(() => {
            for (const [column, value, code] of codes) this.storage.dict.put([uid, column, value], code);
          });
        }
        if (removed > 0 || stale) await native.segmentSave(loaded, this.storage.snapshotPath(rec.snapshot!));
        return loaded;
      }
      native.segmentRelease(loaded);
    }
    const handle = native.segmentCreate(this.dim, this.metric);
    await this.appendFromStorage(handle, Array.from(members));
    await native.segmentBuild(handle, this.record.indexType, this.buildOptions());
    if (this.storage.durable) {
      const file = rec.snapshot ?? `${uid}-${rec.pid}.seg`;
      await native.segmentSave(handle, this.storage.snapshotPath(file));
      if (!rec.snapshot) await this.storage.write(() => this.storage.parts.put([uid, rec.pid], { ...rec, snapshot: file }));
    }
    this.rebuiltSnapshots++;
    return handle;
  }

  /** The snapshot's segment, or null when it is missing or corrupt. */
  private async loadSnapshot(rec: PartitionRecord): Promise<number | null> {
    if (!rec.snapshot) return null;
    try {
      return await native.segmentLoad(this.storage.snapshotPath(rec.snapshot));
    } catch (e) {
      const code = (e as SableError).code;
      if (code === 'snapshot_missing' || code === 'snapshot_corrupt') return null;
      throw e;
    }
  }

  /** The ids a sealed partition holds: those recorded when it was sealed, minus its tombstones. */
  private members(rec: PartitionRecord): Float64Array {
    const uid = this.record.uid;
    const ids = this.storage.sealedIds(uid, rec);
    const tombs = new Set<number>();
    for (const key of this.storage.keys(this.storage.tombs, [uid, rec.pid])) tombs.add(key[2] as number);
    return tombs.size === 0 ? ids : ids.filter((id) => !tombs.has(id));
  }

  /**
   * Tombstones and snapshot files of partitions that have no record: a compaction that did not
   * commit before the process stopped leaves them.
   */
  private async dropOrphans(records: PartitionRecord[]): Promise<void> {
    const uid = this.record.uid;
    const known = new Set(records.map((r) => r.pid));
    const orphans = new Set<number>();
    for (const key of this.storage.keys(this.storage.tombs, [uid])) {
      if (!known.has(key[1] as number)) orphans.add(key[1] as number);
    }
    if (orphans.size > 0) {
      await this.storage.write(() => {
        for (const pid of orphans) this.storage.removeRange(this.storage.tombs, [uid, pid]);
      });
    }
    if (!this.storage.durable) return;
    const snapshots = new Set(records.map((r) => r.snapshot).filter((f) => f !== undefined));
    for (const file of readdirSync(this.storage.segmentsDir)) {
      const m = /^(\d+)-(\d+)\.seg(\.tmp)?$/.exec(file);
      if (m && Number(m[1]) === uid && !snapshots.has(file)) rmSync(this.storage.snapshotPath(file), { force: true });
    }
  }

  /** Rows not served because their snapshot held them past a delete (see openSealed). */
  repairedRows = 0;

  /** How many snapshots were rebuilt from LMDB when this dataset was opened. */
  rebuiltSnapshots = 0;

  /** Appends the stored vectors and metadata of `ids` (those still stored) to a segment. */
  private async appendFromStorage(handle: number, ids: number[]): Promise<void> {
    const uid = this.record.uid;
    for (let start = 0; start < ids.length; start += REBUILD_CHUNK) {
      const chunk = ids.slice(start, start + REBUILD_CHUNK);
      const present: number[] = [];
      const rows = new Float32Array(chunk.length * this.dim);
      const metas: (Metadata | undefined)[] = [];
      for (const id of chunk) {
        const bytes = this.storage.vectors.get([uid, id]);
        if (!bytes) continue;
        rows.set(bytesToFloat32(bytes), present.length * this.dim);
        metas.push(this.storage.meta.get([uid, id]));
        present.push(id);
      }
      const columns = columnBatches(this.ctx, metas);
      native.segmentAppend(handle, Float64Array.from(present), rows.subarray(0, present.length * this.dim), columns.batches);
    }
  }

  // ---------------------------------------------------------------- compaction

  /**
   * Merges sealed partitions that are small or carry tombstones into one, rebuilt without the
   * deleted rows. Searches and writes go on meanwhile. Resolves with the partitions merged.
   */
  async compact(): Promise<{ merged: number }> {
    this.checkOpen();
    return this.maintenanceTurn(() => this.compactNow());
  }

  private async compactNow(): Promise<{ merged: number }> {
    await this.settle();
    const plan = await this.exclusive(async () => {
      const candidates = this.partitions.filter((p) => {
        if (p.state !== 'sealed') return false;
        const s = native.segmentStats(p.handle);
        return s.live < s.rows || s.live < this.record.promotion.max_buffer_vectors;
      });
      const worth = candidates.length >= 2 || candidates.some((p) => native.segmentStats(p.handle).live < p.rows);
      if (!worth) return null;
      const pid = this.record.nextPartition++;
      await this.storage.write(() => this.storage.catalog.put(this.name, this.record));
      const target = new Partition(pid, native.segmentCreate(this.dim, this.metric), 'sealing');
      for (const src of candidates) await native.segmentAbsorb(target.handle, src.handle);
      this.compaction = { target, sources: new Set(candidates) };
      return this.compaction;
    });
    if (!plan) return { merged: 0 };
    try {
      await this.buildInTurn(plan.target.handle);
      const snapshot = await this.saveSnapshot(plan.target);
      await this.exclusive(async () => {
        const ids = native.segmentLiveIds(plan.target.handle);
        const uid = this.record.uid;
        await this.storage.write(() => {
          this.storage.putSealed(uid, { pid: plan.target.pid, state: 'sealed', snapshot, createdAt: Date.now() }, ids);
          for (const src of plan.sources) {
            this.storage.removePartition(uid, src.pid);
            this.storage.removeRange(this.storage.tombs, [uid, src.pid]);
          }
        });
        plan.target.state = 'sealed';
        this.partitions = [...this.partitions.filter((p) => !plan.sources.has(p)), plan.target];
        this.compaction = null;
        for (const src of plan.sources) {
          src.release();
          if (this.storage.durable) rmSync(this.storage.snapshotPath(`${uid}-${src.pid}.seg`), { force: true });
        }
      });
    } catch (e) {
      this.compaction = null;
      native.segmentRelease(plan.target.handle);
      throw e;
    }
    return { merged: plan.sources.size };
  }

  // ---------------------------------------------------------------- search

  /** The handles and native options of a search, for this thread or a worker. */
  plan(opts: SearchOptions = {}): SearchPlan {
    this.checkOpen();
    const k = opts.topK ?? 10;
    if (!Number.isInteger(k) || k < 1 || k > MAX_TOP_K) throw invalid(`topK must be an integer from 1 to ${MAX_TOP_K}`);
    for (const [name, v] of [['nprobe', opts.nprobe], ['beamWidth', opts.beamWidth], ['rerankDepth', opts.rerankDepth]] as const) {
      if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 1_000_000)) throw invalid(`${name} must be a non-negative integer`);
    }
    const options: NativeQueryOptions = {
      k,
      nprobe: opts.nprobe,
      beamWidth: opts.beamWidth,
      rerankDepth: opts.rerankDepth,
      exact: opts.exact,
      predicates: compileFilters(this.ctx, opts.filters, opts.advancedFilters),
    };
    if (opts.nprobe === undefined && opts.beamWidth === undefined && this.tuner.active) {
      Object.assign(options, this.tuner.knobs(this.indexDefaults()));
    }
    return { handles: this.partitions.map((p) => p.handle), options };
  }

  /** Turns native results into hits (with metadata unless asked not to). */
  hits(result: NativeResult, includeMetadata = true): Hit[] {
    const out: Hit[] = new Array(result.ids.length);
    for (let i = 0; i < result.ids.length; i++) {
      const id = result.ids[i];
      const hit: Hit = { id, score: result.scores[i] };
      if (includeMetadata) hit.metadata = this.storage.meta.get([this.record.uid, id]) ?? {};
      out[i] = hit;
    }
    return out;
  }

  /** Feeds the SLA tuner with the latency of a search run elsewhere (a worker). */
  recordLatency(us: number): void {
    this.tuner.record(us, this.tuner.active ? this.indexDefaults().nlist : 0);
  }

  async search(query: Float32Array, opts: SearchOptions = {}): Promise<Hit[]> {
    return (await this.searchDetailed(query, opts)).hits;
  }

  async searchDetailed(query: Float32Array, opts: SearchOptions = {}): Promise<{ hits: Hit[]; receipt: Receipt }> {
    this.checkQuery(query, 1);
    const plan = this.plan(opts);
    const t0 = performance.now();
    const result = native.search(plan.handles, query, plan.options);
    const elapsed = Math.round((performance.now() - t0) * 1000);
    this.recordLatency(elapsed);
    return { hits: this.hits(result, opts.includeMetadata ?? true), receipt: { ...result.receipt, elapsed_us: elapsed } };
  }

  /** One hits array per query; `threads` threads answer the batch off the JS thread. */
  async searchBatch(queries: Float32Array, opts: BatchSearchOptions = {}): Promise<Hit[][]> {
    this.checkQuery(queries, 0);
    const threads = opts.threads ?? 1;
    if (!Number.isInteger(threads) || threads < 1 || threads > 256) throw invalid('threads must be an integer from 1 to 256');
    const plan = this.plan(opts);
    const results = await native.searchBatch(plan.handles, queries, plan.options, threads);
    return results.map((r) => this.hits(r, opts.includeMetadata ?? true));
  }

  private checkQuery(q: Float32Array, exactCount: number): void {
    if (!(q instanceof Float32Array)) throw invalid('the query must be a Float32Array');
    if (exactCount === 1 ? q.length !== this.dim : q.length % this.dim !== 0) {
      throw invalid(`the query has ${q.length} values; this dataset's dimension is ${this.dim}`);
    }
    for (let i = 0; i < q.length; i++) if (!Number.isFinite(q[i])) throw invalid('the query holds a non-finite value');
  }

  private indexDefaults(): { nprobe: number; beamWidth: number; nlist: number } {
    for (const p of this.partitions) {
      const s = native.segmentStats(p.handle);
      if (s.indexStatus === 'ready') return { nprobe: s.defaultNprobe, beamWidth: s.defaultBeamWidth, nlist: s.nlist };
    }
    return { nprobe: 0, beamWidth: 0, nlist: 0 };
  }

  // ---------------------------------------------------------------- keywords and hybrid

  /** The BM25 index, built from LMDB on first use with no write interleaving. */
  private keywordIndex(): Promise<KeywordIndex> {
    this.keywordBuild ??= this.exclusive(async () => (this.keyword = await rebuildKeywordIndex(this.storage, this.record.uid)))
      .catch((e) => {
        this.keywordBuild = null;
        throw e;
      });
    return this.keywordBuild;
  }

  /** 1 for each id that is live and passes the predicates. */
  private matchIds(ids: Float64Array, predicates: NativeQueryOptions['predicates']): Uint8Array {
    const out = new Uint8Array(ids.length);
    for (const p of this.partitions) {
      const m = native.segmentMatch(p.handle, ids, { predicates });
      for (let i = 0; i < m.length; i++) out[i] |= m[i];
    }
    return out;
  }

  /** Scores of the ids' vectors against a query (NaN for ids without a live vector). */
  scoreIds(ids: Float64Array, query: Float32Array): Float32Array {
    this.checkQuery(query, 1);
    const out = new Float32Array(ids.length).fill(NaN);
    for (const p of this.partitions) {
      const s = native.segmentScore(p.handle, ids, query);
      for (let i = 0; i < s.length; i++) if (!Number.isNaN(s[i])) out[i] = s[i];
    }
    return out;
  }

  /** Keyword (BM25) search over the `text` metadata, with the same filters as vector search. */
  async keywordSearch(text: string, opts: SearchOptions = {}): Promise<{ id: number; score: number }[]> {
    this.checkOpen();
    if (typeof text !== 'string') throw invalid('the keyword query must be a string');
    const { options } = this.plan(opts);
    const index = await this.keywordIndex();
    const k = options.k;
    if (!options.predicates?.length) return index.search(text, k);
    // Filters live in the native columns: ask for more candidates until k pass or none are left.
    for (let want = k * 4; ; want *= 4) {
      const found = index.search(text, want);
      const mask = this.matchIds(Float64Array.from(found, (h) => h.id), options.predicates);
      const passed = found.filter((_, i) => mask[i]);
      if (passed.length >= k || found.length < want) return passed.slice(0, k);
    }
  }

  /**
   * Dense plus keyword search fused on normalised scores; `alpha` 1 is pure vector, 0 pure
   * keyword. `runDense` lets a caller run the dense part elsewhere (a worker pool).
   */
  async hybridSearch(
    query: Float32Array | null,
    text: string,
    opts: SearchOptions & { alpha: number },
    runDense: (q: Float32Array, o: SearchOptions) => Promise<{ hits: Hit[]; receipt: Receipt }> = (q, o) => this.searchDetailed(q, o),
  ): Promise<{ hits: (Hit & Omit<FusedHit, 'id' | 'score'>)[]; receipt: Receipt | null; keyword_candidates: number }> {
    if (!(opts.alpha >= 0 && opts.alpha <= 1)) throw invalid('alpha must be between 0 and 1');
    const topK = opts.topK ?? 10;
    const depth = Math.min(MAX_TOP_K, Math.max(topK * 4, 40));
    const dense = query ? await runDense(query, { ...opts, topK: depth, includeMetadata: false }) : null;
    const keyword = await this.keywordSearch(text, { ...opts, topK: depth });
    const candidates = new Map<number, { id: number; dense: number; keyword: number }>();
    for (const h of dense?.hits ?? []) candidates.set(h.id, { id: h.id, dense: h.score, keyword: 0 });
    const keywordOnly: number[] = [];
    for (const h of keyword) {
      const c = candidates.get(h.id);
      if (c) c.keyword = h.score;
      else {
        candidates.set(h.id, { id: h.id, dense: NaN, keyword: h.score });
        keywordOnly.push(h.id);
      }
    }
    if (query && keywordOnly.length > 0) {
      const ids = Float64Array.from(keywordOnly);
      const scores = this.scoreIds(ids, query);
      ids.forEach((id, i) => (candidates.get(id)!.dense = scores[i]));
    }
    const fused = fuse([...candidates.values()], query ? opts.alpha : 0, topK);
    const includeMetadata = opts.includeMetadata ?? true;
    const hits = fused.map((f) => ({
      ...f,
      ...(includeMetadata ? { metadata: this.storage.meta.get([this.record.uid, f.id]) ?? {} } : {}),
    }));
    return { hits, receipt: dense?.receipt ?? null, keyword_candidates: keyword.length };
  }

  // ---------------------------------------------------------------- settings and stats

  getVector(id: number): Float32Array | undefined {
    const bytes = this.storage.vectors.get([this.record.uid, id]);
    return bytes ? bytesToFloat32(bytes) : undefined;
  }

  getMetadata(id: number): Metadata | undefined {
    if (!this.storage.vectors.doesExist([this.record.uid, id])) return undefined;
    return this.storage.meta.get([this.record.uid, id]) ?? {};
  }

  get promotionPolicy(): PromotionPolicy {
    return { ...this.record.promotion };
  }

  async setPromotionPolicy(policy: Partial<PromotionPolicy>): Promise<PromotionPolicy> {
    const next = { ...this.record.promotion, ...policy };
    checkPromotion(next);
    await this.exclusive(async () => {
      this.record.promotion = next;
      await this.storage.write(() => this.storage.catalog.put(this.name, this.record));
      if (this.growing.rows >= next.max_buffer_vectors) await this.promoteLocked();
    });
    if (this.ageTimer) clearInterval(this.ageTimer);
    this.startAgeTimer();
    return this.promotionPolicy;
  }

  /** Column types by metadata key: declared ones and those taken from the first value seen. */
  get columnTypes(): Record<string, ColumnType> {
    return { ...this.record.columns };
  }

  /**
   * Declares column types (a schema change): every partition's columns are rebuilt from the
   * stored metadata and swapped in at once, so searches see either the old or the new typing.
   */
  async setColumnTypes(types: Record<string, ColumnType>): Promise<void> {
    this.checkOpen();
    for (const [name, type] of Object.entries(types)) checkColumnType(name, type);
    await this.exclusive(async () => {
      Object.assign(this.record.columns, types);
      const uid = this.record.uid;
      const newCodes: [string, string, number][] = [];
      const all = [...this.partitions, ...(this.compaction ? [this.compaction.target] : [])];
      for (const p of all) newCodes.push(...this.columnsFromStorage(p.handle));
      await this.storage.write(() => {
        this.storage.catalog.put(this.name, this.record);
        for (const [column, value, code] of newCodes) this.storage.dict.put([uid, column, value], code);
      });
    });
  }

  /**
   * Rebuilds a segment's columns from the stored metadata with the dataset's column types;
   * returns the dictionary codes it assigned (to be stored by the caller).
   */
  private columnsFromStorage(handle: number): [string, string, number][] {
    const uid = this.record.uid;
    const rowIds = native.segmentRowIds(handle);
    const metas = Array.from(rowIds, (id) => this.storage.meta.get([uid, id]));
    const columns = columnBatches(this.ctx, metas);
    native.segmentReplaceColumns(handle, columns.batches, rowIds.length);
    return columns.newCodes;
  }

  /** Whether a segment's columns were typed before a schema change it has not seen. */
  private staleColumns(handle: number): boolean {
    return Object.entries(native.segmentColumnTypes(handle)).some(([name, type]) => this.record.columns[name] !== type);
  }

  get sla(): SlaStatus {
    return this.tuner.status();
  }

  async setSla(config: Partial<SlaConfig>): Promise<SlaStatus> {
    const next = { ...(this.record.sla ?? DEFAULT_SLA), ...config };
    checkSla(next);
    await this.exclusive(async () => {
      this.record.sla = next;
      await this.storage.write(() => this.storage.catalog.put(this.name, this.record));
    });
    this.tuner.reconfigure(next);
    return this.sla;
  }

  /** Sets the index type of the dataset and rebuilds every sealed partition with it. */
  async setIndexType(indexType: IndexType, tuning?: DatasetRecord['tuning']): Promise<void> {
    await this.setDefaults({ indexType, tuning });
    await this.rebuild();
  }

  /** Index type and tuning of partitions sealed from now on (existing ones keep theirs). */
  async setDefaults(defaults: { indexType?: IndexType; tuning?: DatasetRecord['tuning'] }): Promise<void> {
    if (defaults.indexType) checkIndexType(defaults.indexType);
    await this.exclusive(async () => {
      if (defaults.indexType) this.record.indexType = defaults.indexType;
      if (defaults.tuning) this.record.tuning = { ...this.record.tuning, ...defaults.tuning };
      await this.storage.write(() => this.storage.catalog.put(this.name, this.record));
    });
  }

  /** Rebuilds the index of every sealed partition in the background; resolves when done. */
  async rebuild(): Promise<void> {
    this.checkOpen();
    // Reported as building from the call on, not from when earlier work lets it start.
    this.rebuildsWaiting++;
    let waiting = true;
    const stopWaiting = () => {
      if (waiting) this.rebuildsWaiting--;
      waiting = false;
    };
    try {
      await this.maintenanceTurn(async () => {
        await this.settle();
        const sealed = this.partitions.filter((p) => p.state === 'sealed');
        for (const p of sealed) {
          p.state = 'sealing';
          this.track(this.seal(p));
        }
        stopWaiting();
        await this.settle();
      });
    } finally {
      stopWaiting();
    }
  }

  private rebuildsWaiting = 0;

  /**
   * Compactions and rebuilds take turns: both rewrite sealed partitions, and a rebuild of a
   * partition a compaction has merged away would bring its record back.
   */
  private maintenanceTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.maintenance.then(fn, fn);
    this.maintenance = run.catch(() => undefined);
    return run;
  }

  private maintenance: Promise<unknown> = Promise.resolve();

  stats(): DatasetStats {
    let vectors = 0;
    let rows = 0;
    let memory = 0;
    let building = false;
    let progressSum = 0;
    let indexed = 0;
    for (const p of this.partitions) {
      const s = native.segmentStats(p.handle);
      vectors += s.live;
      rows += s.rows;
      memory += s.memoryBytes;
      if (p !== this.growing) {
        indexed++;
        if (p.state === 'sealed') progressSum += 100;
        else {
          // A partition sealing waits for its build, builds, then writes its snapshot.
          progressSum += p.built ? 100 : s.indexStatus === 'building' ? s.progress : 0;
          building = true;
        }
      }
    }
    const growingRows = native.segmentStats(this.growing.handle).live;
    return {
      name: this.name,
      dim: this.dim,
      metric: this.metric,
      vector_count: vectors,
      deleted_count: rows - vectors,
      index_type: this.record.indexType,
      index_status: building || (this.rebuildsWaiting > 0 && indexed > 0) ? 'building' : indexed === 0 ? 'empty' : 'ready',
      progress: indexed === 0 ? 0 : this.rebuildsWaiting > 0 ? 0 : Math.round(progressSum / indexed),
      partitions: this.partitions.filter((p) => native.segmentStats(p.handle).rows > 0).length,
      growing_vectors: growingRows,
      memory_bytes: memory,
      storage_bytes: vectors * this.dim * 4,
      built_at: this.builtAt,
    };
  }

  // ---------------------------------------------------------------- lifecycle

  /** Stops timers and waits for background work; the dataset is unusable afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.ageTimer) clearInterval(this.ageTimer);
    for (const release of [...this.buildHolds]) release();
    await this.queue.catch(() => undefined);
    await this.maintenance;
    await this.settle().catch(() => undefined);
    this.closed = true;
    this.keyword = null;
    this.keywordBuild = null;
    for (const p of this.partitions) native.segmentRelease(p.handle);
    this.partitions = [];
  }

  /** Removes every vector, partition and snapshot of the dataset. */
  async destroy(): Promise<void> {
    const uid = this.record.uid;
    const pids = this.partitions.map((p) => p.pid);
    await this.close();
    await this.storage.write(() => {
      for (const db of [this.storage.vectors, this.storage.meta, this.storage.parts, this.storage.partIds, this.storage.pending, this.storage.tombs, this.storage.dict]) {
        this.storage.removeRange(db as never, [uid] as Key);
      }
      this.storage.catalog.remove(this.name);
    });
    if (this.storage.durable) for (const pid of pids) rmSync(this.storage.snapshotPath(`${uid}-${pid}.seg`), { force: true });
  }

  private checkOpen(): void {
    if (this.closed) throw new SableError(`dataset '${this.name}' is closed`, 'dataset_closed');
  }

  /** Runs `fn` after every earlier write of this dataset (one writer at a time). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function checkMetadata(id: number, m: Metadata | undefined | null): void {
  if (m === undefined || m === null) return;
  if (typeof m !== 'object' || Array.isArray(m)) throw invalid(`metadata of ${id} must be an object`);
  for (const [k, v] of Object.entries(m)) {
    if (!isScalar(v)) throw invalid(`metadata '${k}' of ${id} must be a string, number, boolean or null`);
  }
}

function isScalar(v: unknown): v is Scalar {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

export function checkPromotion(p: PromotionPolicy): void {
  if (!Number.isInteger(p.max_buffer_vectors) || p.max_buffer_vectors < 1) throw invalid('max_buffer_vectors must be a positive integer');
  if (!Number.isInteger(p.max_buffer_age_ms) || p.max_buffer_age_ms < 1) throw invalid('max_buffer_age_ms must be a positive integer');
}

export function checkSla(s: SlaConfig): void {
  for (const [k, v] of Object.entries(s)) {
    if (!Number.isInteger(v) || v < 0) throw invalid(`${k} must be a non-negative integer`);
  }
  if (s.max_nprobe_fraction > 100) throw invalid('max_nprobe_fraction is a percentage of nlist (0-100)');
  if (s.min_beam_width > s.max_beam_width) throw invalid('min_beam_width exceeds max_beam_width');
}

const COLUMN_TYPES = new Set(['u32', 'i32', 'i64', 'f32', 'f64', 'string', 'bool']);

export function checkColumnType(name: string, type: string): asserts type is ColumnType {
  if (!COLUMN_TYPES.has(type)) throw invalid(`column '${name}' has unknown type '${type}' (expected u32, i32, i64, f32, f64, string or bool)`);
}

export function checkIndexType(t: string): asserts t is IndexType {
  if (!['sable', 'hnsw', 'ivf', 'flat'].includes(t)) throw invalid(`unknown index type '${t}' (expected sable, hnsw, ivf or flat)`);
}
