/**
 * Writes and point reads of vectors: ids as the API takes them (integers, or strings hashed to
 * 53-bit integers, two strings on one integer refused), texts embedded with the dataset's model
 * when a vector comes without values, the upsert, and the string ids kept beside it.
 */
import type { DatasetRecord } from '../catalog/datasets/record.js';
import { toInternalId } from '../catalog/datasets/ids.js';
import type { DatasetService } from '../catalog/datasets/service.js';
import { badRequest, SableError } from '../errors/codes.js';
import type { Metadata } from '../engine/index.js';
import type { Embedder } from './embeddings/embedder.js';
import type { Scalar } from '../contract/json-schema.js';
import type { DeleteVectors, InsertVectors } from './requests.js';
import type { ShardedVectors } from './sharded.js';

/** Metadata keys that point at storage and are never returned. */
const HIDDEN_KEYS = ['document_storage_key', 'document_storage_bucket', 'payload_ref'];

export class VectorWrites {
  constructor(
    private readonly datasets: DatasetService,
    private readonly embedder: Embedder,
    /** Cluster mode: the dataset's shard replicas, instead of this process's engine. */
    private readonly sharded?: ShardedVectors,
  ) {}

  /** An upsert; vectors without values are embedded from `metadata.text` first. */
  async insert(orgId: string, r: DatasetRecord, body: InsertVectors): Promise<{ inserted: number; embedded: number }> {
    const ds = this.sharded ? undefined : this.datasets.engineOf(r);
    const vectors = body.vectors;
    const values = new Float32Array(vectors.length * r.dim);
    const toEmbed: number[] = [];
    vectors.forEach((v, i) => {
      if (v.values === undefined) return void toEmbed.push(i);
      checkDimension(v.values, r.dim, `vectors[${i}].values`);
      values.set(v.values, i * r.dim);
    });
    const ids = this.resolveIds(r, vectors.map((v) => v.id), true);
    if (toEmbed.length > 0) {
      const embedded = await this.embedder.embed(orgId, { ...r.embedding, dim: r.dim }, toEmbed.map((i) => String(vectors[i].metadata!.text)), 'document');
      toEmbed.forEach((i, j) => values.set(embedded[j], i * r.dim));
    }
    const metadata = vectors.map((v) => (v.metadata ?? {}) as Metadata);
    if (ds) await ds.upsert(ids.map((m) => m.id), values, metadata);
    else await this.sharded!.upsert(r, ids.map((m) => m.id), values, metadata);
    await this.datasets.recordExternalIds(r, ids);
    await this.datasets.observeMetadata(r, metadata);
    return { inserted: vectors.length, embedded: toEmbed.length };
  }

  /** Embedded, every write concern is met by the local commit; in a cluster it counts replicas. */
  async delete(r: DatasetRecord, body: DeleteVectors): Promise<{ deleted: number }> {
    const ds = this.sharded ? undefined : this.datasets.engineOf(r);
    const ids = this.resolveIds(r, body.ids, false);
    const deleted = ds ? await ds.delete(ids.map((m) => m.id)) : await this.sharded!.delete(r, ids.map((m) => m.id), body.write_concern ?? 'default');
    await this.datasets.recordExternalIds(r, ids.map((m) => ({ id: m.id })));
    return { deleted };
  }

  /** The stored metadata of one vector (by integer or string id), or 404. */
  async payload(r: DatasetRecord, vectorId: string): Promise<{ id: number; external_id?: string; metadata: Record<string, Scalar> }> {
    const m = toInternalId(/^-?\d+$/.test(vectorId) ? Number(vectorId) : vectorId);
    const metadata = !m ? undefined : this.sharded ? (await this.sharded.point(r, m.id, false))?.metadata : this.datasets.engineOf(r).getMetadata(m.id);
    if (!m || metadata === undefined) throw new SableError('not_found', `vector ${vectorId} was not found`);
    const external = this.datasets.externalIdOf(r, m.id);
    return { id: m.id, ...(external !== undefined ? { external_id: external } : {}), metadata: visibleMetadata(metadata, true) };
  }

  /** Integer ids of the request's ids; string ids are checked against the dataset's mapping. */
  private resolveIds(r: DatasetRecord, ids: (string | number)[], forWrite: boolean) {
    const out: { id: number; external?: string }[] = [];
    const inBatch = new Map<number, string | undefined>();
    ids.forEach((raw, i) => {
      const m = toInternalId(raw);
      if (!m) throw badRequest(`ids[${i}] must be a safe integer or a non-empty string`);
      if (forWrite) {
        const prior = inBatch.has(m.id) ? inBatch.get(m.id) : this.datasets.externalIdOf(r, m.id);
        if (m.external !== undefined && prior !== undefined && prior !== m.external) {
          throw new SableError('id_collision', `ids '${prior}' and '${m.external}' map to the same integer id ${m.id}`, { fields: { id: m.id } });
        }
        inBatch.set(m.id, m.external);
      }
      out.push(m);
    });
    return out;
  }
}

/** A written vector's length against the dataset's dimension, per vector so the error names it (queries are checked by the engine). */
export function checkDimension(values: ArrayLike<number>, dim: number, what: string): void {
  if (values.length !== dim) throw badRequest(`${what} has ${values.length} values; the dataset dimension is ${dim}`);
}

/** Metadata as returned: storage pointers never, document text only with include_documents. */
export function visibleMetadata(m: Record<string, Scalar>, includeDocuments: boolean): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const [k, v] of Object.entries(m)) {
    if (HIDDEN_KEYS.includes(k)) continue;
    if (!includeDocuments && (k === 'text' || k === 'doc_value')) continue;
    out[k] = v;
  }
  return out;
}
