/** The embedded engine: a catalog of datasets over one LMDB environment. */
import { invalid, SableError } from '../errors/codes.js';
import { Dataset } from './dataset/dataset.js';
import { checkPromotion, checkSla, DEFAULT_PROMOTION } from './dataset/settings.js';
import { native } from './native.js';
import { DEFAULT_SLA } from './sla.js';
import { LmdbStore, type DatasetManifest } from './lmdb-store.js';
import type { CreateDatasetOptions } from './types.js';
import { checkColumnType, checkIndexType, checkMetric, type ColumnType, type Metric } from './vocabulary.js';

export interface EngineOptions {
  /** Data directory; without it the engine keeps nothing after close. */
  path?: string;
}

const NAME = /^[A-Za-z0-9_.\-:]{1,200}$/;

export class Engine {
  private readonly datasets = new Map<string, Dataset>();
  private closed = false;

  private constructor(private readonly storage: LmdbStore) {}

  static async open(options: EngineOptions = {}): Promise<Engine> {
    const engine = new Engine(LmdbStore.open(options.path));
    for (const { value } of engine.storage.catalog.getRange()) {
      engine.datasets.set(value.name, await Dataset.open(engine.storage, value));
    }
    return engine;
  }

  /** The kernel instruction set in use (serial, avx2, avx512, neon). */
  get isa(): string {
    return native.activeIsa();
  }

  get durable(): boolean {
    return this.storage.durable;
  }

  async createDataset(opts: CreateDatasetOptions): Promise<Dataset> {
    this.checkOpen();
    if (!opts || typeof opts.name !== 'string' || !NAME.test(opts.name)) {
      throw invalid('name must be 1-200 characters of letters, digits, _ . - :');
    }
    if (this.datasets.has(opts.name)) throw new SableError('dataset_exists', `dataset '${opts.name}' exists`);
    if (!Number.isInteger(opts.dim) || opts.dim < 1 || opts.dim > 65536) throw invalid('dim must be an integer from 1 to 65536');
    const metric: Metric = opts.metric ?? 'cosine';
    checkMetric(metric);
    const indexType = opts.indexType ?? 'sable';
    checkIndexType(indexType);
    const promotion = { ...DEFAULT_PROMOTION, ...opts.promotion };
    checkPromotion(promotion);
    const sla = opts.sla ? { ...DEFAULT_SLA, ...opts.sla } : null;
    if (sla) checkSla(sla);
    const columns: Record<string, ColumnType> = {};
    for (const f of opts.schema ?? []) {
      checkColumnType(f.name, f.type);
      columns[f.name] = f.type;
    }
    const uid = this.nextUid();
    const manifest: DatasetManifest = {
      uid,
      name: opts.name,
      dim: opts.dim,
      metric,
      indexType,
      tuning: { ...opts.tuning },
      promotion,
      sla,
      columns,
      nextPartition: 1,
      createdAt: new Date().toISOString(),
    };
    const ds = await Dataset.create(this.storage, manifest);
    this.datasets.set(opts.name, ds);
    return ds;
  }

  getDataset(name: string): Dataset | undefined {
    this.checkOpen();
    return this.datasets.get(name);
  }

  listDatasets(): Dataset[] {
    this.checkOpen();
    return [...this.datasets.values()];
  }

  /** Deletes a dataset, its vectors and its snapshot files. Resolves false when there was none. */
  async dropDataset(name: string): Promise<boolean> {
    this.checkOpen();
    const ds = this.datasets.get(name);
    if (!ds) return false;
    this.datasets.delete(name);
    await ds.destroy();
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const ds of this.datasets.values()) await ds.close();
    this.datasets.clear();
    await this.storage.close();
  }

  private nextUid(): number {
    let max = 0;
    for (const ds of this.datasets.values()) max = Math.max(max, ds.manifest.uid);
    for (const { value } of this.storage.catalog.getRange()) max = Math.max(max, value.uid);
    return max + 1;
  }

  private checkOpen(): void {
    if (this.closed) throw new SableError('engine_closed', 'the engine is closed');
  }
}
