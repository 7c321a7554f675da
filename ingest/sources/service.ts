/**
 * Sources as the API sees them: create (config checked against its type's schema, defaults
 * filled, secrets sealed), validate (the same check, then the connector contacts the source for
 * samples and warnings), read with secrets masked, update, references, and deletion guarded by
 * them (409 source_in_use while an enabled schedule or an in-flight job uses the source, unless
 * forced, which disables its schedules first).
 */
import { randomUUID } from 'node:crypto';
import { compileBody, type BodyCheck } from '../../contract/validation.js';
import { badRequest, SableError } from '../../errors/codes.js';
import type { JobQueue } from '../../jobs/queue.js';
import { isActive } from '../../jobs/records.js';
import type { Connectors } from '../connectors/connector.js';
import type { SourceCreate, SourcePatch } from '../requests.js';
import type { ScheduleRecords } from '../schedules/store.js';
import { isSealed, masked, MASK, type SourceRecord, type SourceStore } from './store.js';
import { crossFieldProblem, secretFields, SOURCE_CONFIGS, SOURCE_TYPES, type SourceType } from './types.js';

export interface References {
  schedules: { id: string; name: string }[];
  schedule_count: number;
  active_job_count: number;
  in_use: boolean;
}


const checks = new Map<SourceType, BodyCheck>(SOURCE_TYPES.map((t) => [t, compileBody(SOURCE_CONFIGS[t], { fillDefaults: true, root: 'config' })]));

export class SourceService {
  constructor(
    private readonly store: SourceStore,
    private readonly schedules: ScheduleRecords,
    private readonly jobs: JobQueue,
    private readonly connectors: Connectors,
  ) {}

  list(orgId: string, limit: number, offset: number) {
    const all = this.store.ofOrg(orgId);
    return { sources: all.slice(offset, offset + limit).map(view), total: all.length };
  }

  /** The source, or 404 source_not_found (also for another organization's). */
  get(orgId: string, id: string): SourceRecord {
    const s = this.store.get(id);
    if (!s || s.org_id !== orgId) throw new SableError('source_not_found', `source ${id} was not found`);
    return s;
  }

  view(s: SourceRecord) {
    return view(s);
  }

  /**
   * The config as its type's schema takes it, defaults filled in; a problem is invalid_request
   * naming the field. `keep` holds the sealed secrets of the stored config a patch may leave as ********.
   */
  normalize(type: SourceType, config: Record<string, unknown>, keep: Record<string, unknown> = {}): Record<string, unknown> {
    const c = structuredClone(config);
    for (const field of secretFields(type)) {
      if (c[field] !== MASK) continue;
      if (keep[field] === undefined) throw badRequest(`config.${field} is ******** but no value is stored: send the secret itself`);
      // A stand-in of the field's type while the schema checks the rest.
      c[field] = (SOURCE_CONFIGS[type].properties as Record<string, { type?: string }>)[field].type === 'object' ? {} : 'kept';
    }
    const problem = checks.get(type)!(c) ?? crossFieldProblem(type, c);
    if (problem) throw badRequest(problem);
    for (const field of secretFields(type)) if (config[field] === MASK) c[field] = keep[field];
    return c;
  }

  /** Checks a config without saving it; contacts the source when its connector is built. */
  async validate(orgId: string, type: SourceType, config: Record<string, unknown>) {
    let normalized: Record<string, unknown>;
    try {
      normalized = this.normalize(type, config);
    } catch (e) {
      if (!(e instanceof SableError)) throw e;
      return { success: false, message: e.message, normalized_config: null, samples: [], warnings: [] };
    }
    try {
      const { samples, warnings } = await this.connectors[type].validate({ orgId, sourceId: 'validate', config: normalized, state: {}, signal: AbortSignal.timeout(30_000) });
      return { success: true, message: 'the config is valid and the source answered', normalized_config: masked(type, normalized), samples, warnings };
    } catch (e) {
      return { success: false, message: (e as Error).message, normalized_config: masked(type, normalized), samples: [], warnings: [] };
    }
  }

  async create(orgId: string, body: SourceCreate): Promise<SourceRecord> {
    const config = this.normalize(body.source_type, body.config);
    const now = new Date().toISOString();
    const id = randomUUID();
    const record: SourceRecord = {
      id,
      org_id: orgId,
      type: body.source_type,
      name: body.name,
      description: body.description ?? null,
      config: this.store.seal(orgId, id, body.source_type, config),
      metadata: body.metadata ?? {},
      created_at: now,
      updated_at: now,
    };
    await this.store.put(record);
    return record;
  }

  /** Changes name, description, metadata or config (a secret sent as ******** keeps its stored value). */
  async update(orgId: string, id: string, patch: SourcePatch): Promise<SourceRecord> {
    const s = this.get(orgId, id);
    const next: SourceRecord = { ...s, updated_at: new Date().toISOString() };
    if (patch.name !== undefined) next.name = patch.name;
    if (patch.description !== undefined) next.description = patch.description;
    if (patch.metadata !== undefined) next.metadata = patch.metadata;
    if (patch.config !== undefined) {
      const stored = Object.fromEntries(secretFields(s.type).filter((f) => isSealed(s.config[f])).map((f) => [f, s.config[f]]));
      next.config = this.store.seal(orgId, id, s.type, this.normalize(s.type, patch.config, stored));
    }
    await this.store.put(next);
    return next;
  }

  async references(orgId: string, id: string): Promise<References> {
    this.get(orgId, id);
    const schedules = this.schedules.ofSource(id).filter((s) => s.enabled);
    const active = (await this.jobs.ofSource(id)).filter(isActive);
    return { schedules: schedules.map((s) => ({ id: s.id, name: s.name })), schedule_count: schedules.length, active_job_count: active.length, in_use: schedules.length + active.length > 0 };
  }

  /** Deletes a source; 409 source_in_use while it is used, unless forced (its schedules are disabled first). */
  async remove(orgId: string, id: string, force: boolean): Promise<void> {
    const refs = await this.references(orgId, id);
    if (refs.in_use && !force) {
      throw new SableError('source_in_use', `source ${id} is used by ${refs.schedule_count} enabled schedule(s) and ${refs.active_job_count} job(s) in flight; send force=true to disable its schedules and delete it`, { fields: { references: refs } });
    }
    for (const s of this.schedules.ofSource(id)) if (s.enabled) await this.schedules.update(s.id, (x) => ({ ...x, enabled: false, next_run_at: null }));
    await this.store.remove([id]);
  }

  async unused(orgId: string): Promise<SourceRecord[]> {
    const out: SourceRecord[] = [];
    for (const s of this.store.ofOrg(orgId)) if (!(await this.references(orgId, s.id)).in_use) out.push(s);
    return out;
  }

  async cleanup(orgId: string): Promise<{ deleted: { id: string; name: string; type: string }[]; count: number }> {
    const gone = await this.unused(orgId);
    await this.store.remove(gone.map((s) => s.id));
    return { deleted: gone.map((s) => ({ id: s.id, name: s.name, type: s.type })), count: gone.length };
  }
}

/** A source as answers show it: secrets masked, no internal fields. */
function view(s: SourceRecord) {
  return {
    id: s.id,
    org_id: s.org_id,
    type: s.type,
    name: s.name,
    description: s.description,
    config: masked(s.type, s.config),
    metadata: s.metadata,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}
