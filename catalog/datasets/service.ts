/**
 * Datasets as the API sees them: records in the control store, each backed by an engine dataset
 * named by its UUID. Provisioning of the engine dataset is asynchronous; until it is done the
 * dataset answers 503 `dataset_not_ready`.
 */
import { badRequest, SableError } from '../../errors/codes.js';
import { randomUUID } from 'node:crypto';
import {
  DEFAULT_SLA,
  resolveTuning,
  type BulkLoad,
  type Dataset,
  type DatasetStats,
  type Engine,
  type IndexType,
  type Metadata,
  type PromotionPolicy,
  type SlaConfig,
  type SlaStatus,
  type TuningInEffect,
} from '../../engine/index.js';
import type { ControlStore } from '../store.js';
import { DEFAULT_HYBRID_ALPHA, type DatasetRecord, type Observations, type SchemaEntry } from './record.js';
import { publicDataset } from './views.js';
import { chooseEmbedding } from './embedding-models.js';
import type { CreateDataset, PatchSchema } from './requests.js';
import { addObservations, applySchema, normalizeFields, observe, promotions, schemaOfBody } from './schema.js';

export interface DatasetServiceOptions {
  /** Whether an inference server for the contract's managed models is configured. */
  managedEmbeddings: boolean;
  /** Wait before provisioning a new dataset's engine. */
  provisionDelayMs: number;
  /** Cluster mode: the datasets' vectors are placed on shard replicas, not in this process's engine. */
  placement?: DatasetPlacement;
}

/**
 * Where a cluster places a dataset's vectors (cluster/: shards in PostgreSQL, replicas on the
 * search nodes, which follow the record's schema themselves).
 */
export interface DatasetPlacement {
  /** Creates the dataset's shards; idempotent. */
  create(r: DatasetRecord): Promise<void>;
  /** Removes its shards, their logs and replicas. */
  drop(datasetId: string): Promise<void>;
  /** The engine statistics of every shard (one in-sync replica each), summed. */
  stats(r: DatasetRecord): Promise<DatasetStats>;
  /** Every in-sync replica rebuilds its index (in the background); the statistics as they started. */
  rebuild(r: DatasetRecord): Promise<DatasetStats>;
  /** Rows upserted through the shards' logs (a bulk load's batch), once their replicas applied them. */
  upsert(r: DatasetRecord, ids: Float64Array, vectors: Float32Array, metadata: Metadata[] | undefined): Promise<void>;
  /**
   * Every in-sync replica applies the record's settings now (index type, tuning, promotion
   * policy, SLA); answers the policy and SLA state of one of them.
   */
  apply(r: DatasetRecord): Promise<{ promotion: PromotionPolicy; sla: SlaStatus }>;
  /** The index tuning in effect over the shards. */
  tuning(r: DatasetRecord): Promise<TuningInEffect>;
}

/** How often a cluster node records the metadata observations of a dataset's writes. */
const OBSERVE_EVERY_MS = 1000;

export class DatasetService {
  private readonly provisioning = new Map<string, Promise<Dataset>>();
  /** Per dataset: whether string ids were ever written (see mayHaveExternalIds). */
  private readonly withExternalIds = new Map<string, boolean>();
  /** What layers above keep per dataset (documents, schedules), removed with it. */
  private readonly deleteHooks: ((datasetId: string) => Promise<void>)[] = [];
  /** Cluster mode: observations gathered per dataset until they are recorded (observeMetadata). */
  private readonly pendingObservations = new Map<string, Observations>();

  constructor(
    private readonly store: ControlStore,
    private readonly engine: Engine,
    private readonly opts: DatasetServiceOptions,
  ) {}

  /** Provisions the engine datasets of records whose provisioning did not finish before a stop. */
  resume(): void {
    const placement = this.opts.placement;
    for (const { value } of this.store.datasets.getRange()) {
      if (placement) {
        void placement.create(value).catch(() => undefined);
        continue;
      }
      if (!this.engine.getDataset(value.id)) void this.provision(value).catch(() => undefined);
    }
  }

  list(orgId: string, limit: number, offset: number): { datasets: DatasetRecord[]; total: number } {
    const all = this.records().filter((r) => r.org_id === orgId);
    all.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    return { datasets: all.slice(offset, offset + limit), total: all.length };
  }

  private records(): DatasetRecord[] {
    return [...this.store.datasets.getRange()].map((e) => e.value);
  }

  /** The record, or 404 `dataset_not_found` (also for another organization's dataset). */
  get(orgId: string, id: string): DatasetRecord {
    const r = this.store.datasetsRead.get(id);
    if (!r || r.org_id !== orgId) throw new SableError('dataset_not_found', `dataset ${id} was not found`);
    return r;
  }

  isReady(id: string): boolean {
    return this.opts.placement !== undefined || this.engine.getDataset(id) !== undefined;
  }

  /**
   * The dataset as the API shows it; one still provisioning is empty and shows the set values (in
   * a cluster, as long as its shards cannot tell theirs).
   */
  async view(r: DatasetRecord): Promise<Record<string, unknown>> {
    const set = () => resolveTuning(engineTuning(r.tuning), 0, DEFAULT_SLA);
    if (this.opts.placement) return publicDataset(r, true, await this.opts.placement.tuning(r).catch(set));
    const ds = this.engine.getDataset(r.id);
    return publicDataset(r, ds !== undefined, ds ? ds.tuning() : set());
  }

  /** The engine dataset, or 503 `dataset_not_ready` while provisioning runs. */
  engineOf(r: DatasetRecord): Dataset {
    if (this.opts.placement) {
      throw new SableError('not_implemented', `in cluster mode dataset ${r.id} is on shard replicas: this operation is not built for them yet (see the README's cluster section)`);
    }
    const ds = this.engine.getDataset(r.id);
    if (!ds) {
      throw new SableError('dataset_not_ready', `dataset ${r.id} is being provisioned; retry shortly`, { retryAfterSeconds: 1 });
    }
    return ds;
  }

  async create(orgId: string, body: CreateDataset): Promise<DatasetRecord> {
    const declared = schemaOfBody(body) === undefined ? [] : normalizeFields(schemaOfBody(body));
    const embedding = chooseEmbedding(body.embedding, body.dim, this.opts.managedEmbeddings);
    const tuning = body.tuning ?? {};
    const now = new Date().toISOString();
    const record: DatasetRecord = {
      id: randomUUID(),
      name: body.name,
      org_id: orgId,
      dim: embedding.dim,
      metric: body.metric ?? 'cosine',
      tuning: checkedTuning({ nlist: tuning.nlist ?? null, nprobe_min: tuning.nprobe_min ?? null, nprobe_max: tuning.nprobe_max ?? null }),
      embedding: { provider: embedding.provider, model: embedding.model, ...(embedding.secret_ref ? { secret_ref: embedding.secret_ref } : {}) },
      index_type: 'sable',
      hybrid: { enabled: body.hybrid === true, alpha: DEFAULT_HYBRID_ALPHA },
      metadata: body.metadata ?? {},
      schema: applySchema([], declared, 'replace'),
      schema_version: declared.length > 0 ? 1 : 0,
      observations: {},
      created_at: now,
      updated_at: now,
    };
    // Names are unique in an organization, as index and collection names are in Pinecone and
    // Qdrant: the check and the put share the transaction.
    await this.store.write(() => {
      const taken = this.records().find((r) => r.org_id === orgId && r.name === record.name);
      if (taken) throw new SableError('dataset_exists', `a dataset named '${record.name}' exists in this organization (id ${taken.id})`, { fields: { id: taken.id } });
      this.store.datasets.put(record.id, record);
    });
    if (this.opts.placement) {
      await this.opts.placement.create(record);
      return record;
    }
    // The record is accepted; the engine is provisioned in the background.
    setTimeout(
      () => void this.provision(record).catch((e) => console.error(`sable: provisioning ${record.id} failed:`, e)),
      this.opts.provisionDelayMs,
    ).unref();
    return record;
  }

  /** Provisions now (ensure-engine); resolves when the dataset takes writes and searches. */
  async ensure(orgId: string, id: string): Promise<DatasetRecord> {
    const r = this.get(orgId, id);
    if (this.opts.placement) await this.opts.placement.create(r);
    else await this.provision(r);
    return r;
  }

  private provision(r: DatasetRecord): Promise<Dataset> {
    const existing = this.engine.getDataset(r.id);
    if (existing) return Promise.resolve(existing);
    let p = this.provisioning.get(r.id);
    if (!p) {
      p = this.engine
        .createDataset({
          name: r.id,
          dim: r.dim,
          metric: r.metric,
          indexType: r.index_type,
          tuning: engineTuning(r.tuning),
          schema: r.schema.map((e) => ({ name: e.name, type: e.type })),
        })
        .finally(() => this.provisioning.delete(r.id));
      this.provisioning.set(r.id, p);
    }
    return p;
  }

  async delete(orgId: string, id: string): Promise<void> {
    const r = this.get(orgId, id);
    await this.provisioning.get(r.id)?.catch(() => undefined);
    if (this.opts.placement) await this.opts.placement.drop(r.id);
    else await this.engine.dropDataset(r.id);
    await this.store.write(() => {
      this.store.datasets.remove(r.id);
      for (const key of this.store.externalIds.getKeys({ start: [r.id], end: [r.id, '\uffff'] })) this.store.externalIds.remove(key);
    });
    this.withExternalIds.delete(r.id);
    for (const hook of this.deleteHooks) await hook(r.id);
  }

  /** Runs `hook` after each dataset is deleted. */
  onDelete(hook: (datasetId: string) => Promise<void>): void {
    this.deleteHooks.push(hook);
  }

  /** Applies `change` to the stored record (bumping updated_at) and returns the new record. */
  async update(r: DatasetRecord, change: (r: DatasetRecord) => void): Promise<DatasetRecord> {
    return this.store.write(() => {
      const current = this.store.datasets.get(r.id);
      if (!current) throw new SableError('dataset_not_found', `dataset ${r.id} was not found`);
      change(current);
      current.updated_at = new Date().toISOString();
      this.store.datasets.put(current.id, current);
      return current;
    });
  }

  /** Vector counts, storage and index state (in a cluster, summed over the shards). */
  async stats(r: DatasetRecord): Promise<DatasetStats> {
    return this.opts.placement ? this.opts.placement.stats(r) : this.engineOf(r).stats();
  }

  /**
   * A bulk load begins: the dataset's index builds wait (they would take the CPU the load needs)
   * and its partitions gather into one, until `end`. In a cluster the replicas build on their own
   * nodes: nothing held.
   */
  beginBulkLoad(r: DatasetRecord): BulkLoad {
    return this.opts.placement ? { expectRows: () => {}, end: () => {} } : this.engineOf(r).beginBulkLoad();
  }

  /** Starts a rebuild of the index in the background; the statistics the moment it started. */
  async rebuild(r: DatasetRecord): Promise<DatasetStats> {
    if (this.opts.placement) return this.opts.placement.rebuild(r);
    const ds = this.engineOf(r);
    void ds.rebuild().catch((e) => console.error(`sable: index rebuild of ${r.id} failed:`, e));
    return ds.stats();
  }

  /** The index type of new partitions (and, with `rebuild`, of every partition, rebuilt in the background). */
  async setIndexType(r: DatasetRecord, indexType: IndexType, rebuild: boolean): Promise<DatasetRecord> {
    const ds = this.opts.placement ? undefined : this.engineOf(r);
    const next = await this.update(r, (cur) => (cur.index_type = indexType));
    if (ds) await ds.setDefaults({ indexType });
    else await this.opts.placement!.apply(next);
    if (rebuild) await this.rebuild(next);
    return next;
  }

  /** Tuning of new partitions, merged into the record's. */
  async setTuning(r: DatasetRecord, tuning: Partial<DatasetRecord['tuning']>): Promise<DatasetRecord> {
    const ds = this.opts.placement ? undefined : this.engineOf(r);
    const next = await this.update(r, (cur) => {
      cur.tuning = checkedTuning({ ...cur.tuning, ...tuning });
    });
    if (ds) await ds.setDefaults({ tuning: engineTuning(next.tuning) });
    else await this.opts.placement!.apply(next);
    return next;
  }

  async promotionPolicy(r: DatasetRecord): Promise<PromotionPolicy> {
    return this.opts.placement ? (await this.opts.placement.apply(r)).promotion : this.engineOf(r).promotionPolicy;
  }

  async setPromotionPolicy(r: DatasetRecord, policy: Partial<PromotionPolicy>): Promise<PromotionPolicy> {
    if (!this.opts.placement) return this.engineOf(r).setPromotionPolicy(policy);
    return (await this.applied(r, (cur) => (cur.promotion = { ...cur.promotion, ...policy }))).promotion;
  }

  async sla(r: DatasetRecord): Promise<SlaStatus> {
    return this.opts.placement ? (await this.opts.placement.apply(r)).sla : this.engineOf(r).sla;
  }

  async setSla(r: DatasetRecord, config: Partial<SlaConfig>): Promise<SlaStatus> {
    if (!this.opts.placement) return this.engineOf(r).setSla(config);
    return (await this.applied(r, (cur) => (cur.sla = { ...cur.sla, ...config }))).sla;
  }

  /**
   * Cluster mode: a settings change is stored in the record, then applied by every in-sync
   * replica; one that refuses it (a value the engine rejects) puts the record back as it was.
   */
  private async applied(r: DatasetRecord, change: (cur: DatasetRecord) => void) {
    const before = this.store.datasets.get(r.id);
    const next = await this.update(r, change);
    try {
      return await this.opts.placement!.apply(next);
    } catch (e) {
      if (before) await this.update(next, (cur) => Object.assign(cur, { promotion: before.promotion, sla: before.sla }));
      throw e;
    }
  }

  /** PATCH schema: merge or replace, then retype the engine's filter columns. */
  async patchSchema(r: DatasetRecord, body: PatchSchema): Promise<SchemaEntry[]> {
    const mode = body.mode ?? 'merge';
    if (mode !== 'merge' && mode !== 'replace') throw badRequest(`mode must be "merge" or "replace" (got ${JSON.stringify(mode)})`);
    const raw = schemaOfBody(body);
    if (raw === undefined) throw badRequest('schema is required');
    const fields = normalizeFields(raw);
    if (fields.length === 0 && mode === 'merge') throw badRequest('an empty schema cannot be merged');
    const ds = this.opts.placement ? undefined : this.engineOf(r);
    const next = await this.update(r, (cur) => {
      cur.schema = applySchema(cur.schema, fields, mode);
      cur.schema_version++;
    });
    // The answer comes once the columns are retyped: a write right after is typed by them.
    if (ds) await ds.setColumnTypes(Object.fromEntries(fields.map((f) => [f.name, f.type])));
    else await this.opts.placement!.apply(next);
    return next.schema;
  }

  /**
   * Whether some vector of the dataset was written with a string id (then results look their
   * string up); false spares a search a store read per hit. Learnt from the store once, kept
   * true by every write of a string id.
   */
  mayHaveExternalIds(r: DatasetRecord): boolean {
    let known = this.withExternalIds.get(r.id);
    if (known === undefined) {
      known = false;
      for (const _ of this.store.externalIds.getKeys({ start: [r.id], end: [r.id, '\uffff'], limit: 1 })) known = true;
      this.withExternalIds.set(r.id, known);
    }
    return known;
  }

  /** Another node of the cluster wrote a string id of the dataset (its catalog change arrived). */
  externalIdsWritten(datasetId: string): void {
    this.withExternalIds.set(datasetId, true);
  }

  /** The string id a vector was inserted with, when it was. */
  externalIdOf(r: DatasetRecord, id: number): string | undefined {
    return this.store.externalIds.get([r.id, id]);
  }

  /** After a write of these ids: string ids are remembered, integer ids forget any earlier string. */
  async recordExternalIds(r: DatasetRecord, ids: { id: number; external?: string }[]): Promise<void> {
    // Integer ids of a dataset that never had a string id have nothing to forget: no transaction
    // (in a cluster, one fewer catalog transaction per write).
    if (!ids.some((m) => m.external !== undefined) && !this.mayHaveExternalIds(r)) return;
    await this.store.write(() => {
      for (const m of ids) {
        if (m.external !== undefined) {
          this.withExternalIds.set(r.id, true);
          this.store.externalIds.put([r.id, m.id], m.external);
        }
        else this.store.externalIds.remove([r.id, m.id]);
      }
    });
  }

  /**
   * Upserts a batch of integer-id vectors (bulk loads): an id that a string used to map to is
   * an integer id now, so its string is forgotten, and the metadata feeds schema inference.
   */
  async loadBatch(r: DatasetRecord, ids: Float64Array, vectors: Float32Array, metadata: Metadata[] | undefined, observed: Observations): Promise<void> {
    if (this.opts.placement) await this.opts.placement.upsert(r, ids, vectors, metadata);
    else await this.engineOf(r).upsert(ids, vectors, metadata, { bulk: true });
    const range = { start: [r.id], end: [r.id, Number.MAX_SAFE_INTEGER + 1] };
    if (this.store.externalIds.getKeysCount({ ...range, limit: 1 }) > 0) {
      await this.store.write(() => {
        for (const id of ids) this.store.externalIds.remove([r.id, id]);
      });
    }
    if (Object.keys(observed).length > 0) await this.observe(this.get(r.org_id, r.id), (obs) => addObservations(obs, observed));
  }

  /**
   * Records observed metadata; promotes fields whose values agree on a type (schema_version++).
   * In a cluster a record change is a catalog transaction, serialized across every node: the
   * observations of a dataset's writes are gathered and recorded once per OBSERVE_EVERY_MS, so
   * writes neither wait for nor queue on them (schema inference lags that much; a process that
   * dies loses at most that much of its counts, which only feed inference).
   */
  async observeMetadata(r: DatasetRecord, metadata: Record<string, unknown>[]): Promise<void> {
    if (metadata.length === 0) return;
    // A field never seen before is recorded with the write, as on one machine: its promotion
    // shows in the schema read right after. Fields seen before only add to counts: batched.
    if (!this.opts.placement || metadata.some((m) => Object.keys(m).some((k) => !(k in r.observations)))) {
      return this.observe(r, (obs) => observe(obs, metadata));
    }
    let pending = this.pendingObservations.get(r.id);
    if (!pending) {
      const gathered: Observations = {};
      pending = gathered;
      this.pendingObservations.set(r.id, gathered);
      setTimeout(() => {
        this.pendingObservations.delete(r.id);
        const current = this.store.datasets.get(r.id);
        if (!current) return; // deleted meanwhile
        void this.observe(current, (obs) => addObservations(obs, gathered)).catch((e) => console.error(`sable: observations of dataset ${r.id} were not recorded:`, e));
      }, OBSERVE_EVERY_MS).unref();
    }
    observe(pending, metadata);
  }

  private async observe(r: DatasetRecord, record: (obs: Observations) => void): Promise<void> {
    let promoted: SchemaEntry[] = [];
    const next = await this.update(r, (cur) => {
      record(cur.observations);
      promoted = promotions(cur.schema, cur.observations);
      if (promoted.length > 0) {
        cur.schema = [...cur.schema, ...promoted];
        cur.schema_version++;
      }
    });
    if (promoted.length === 0) return;
    if (this.opts.placement) await this.opts.placement.apply(next);
    else await this.engineOf(next).setColumnTypes(Object.fromEntries(promoted.map((f) => [f.name, f.type])));
  }
}

/** The tuning, or 400 when its nprobe range is empty or wider than its lists. */
export function checkedTuning<T extends DatasetRecord['tuning']>(t: T): T {
  if (t.nprobe_min && t.nprobe_max && t.nprobe_min > t.nprobe_max) {
    throw badRequest(`tuning.nprobe_min (${t.nprobe_min}) is above tuning.nprobe_max (${t.nprobe_max})`);
  }
  if (t.nlist && t.nprobe_min && t.nprobe_min > t.nlist) {
    throw badRequest(`tuning.nprobe_min (${t.nprobe_min}) is above tuning.nlist (${t.nlist}): a search cannot probe more lists than there are`);
  }
  return t;
}

export function engineTuning(t: DatasetRecord['tuning']) {
  return {
    ...(t.nlist ? { nlist: t.nlist } : {}),
    ...(t.nprobe_min ? { nprobe_min: t.nprobe_min } : {}),
    ...(t.nprobe_max ? { nprobe_max: t.nprobe_max } : {}),
    ...(t.m ? { m: t.m } : {}),
    ...(t.ef_construction ? { ef_construction: t.ef_construction } : {}),
  };
}
