/**
 * The ingestion routes as the Ingestion pages call them (sources, uploads, jobs, schedules, the
 * document catalog), typed with the client's types (the service's own schemas). Two calls leave
 * the typed client: the upload's PUT (an XMLHttpRequest, for its progress events; the upload URL
 * takes no key) and a document's download (a fetch with the key in its header, answered as a blob
 * the page saves through an object URL: the key is never in a URL).
 */
import {
  SableApiError,
  type CatalogDocument,
  type DocumentList,
  type Job,
  type JobFile,
  type JobFiles,
  type JobList,
  type JobStatistics,
  type Schedule,
  type ScheduleCreate,
  type ScheduleList,
  type Source,
  type SourceCreate,
  type SourceList,
  type SourceReferences,
  type SourceTypes,
  type SourceUploadAnswer,
  type SourceUploadComplete,
  type SourceValidation,
} from '../../client/index.js';
import type { Api } from './api.js';

export type { CatalogDocument, Job, JobStatistics, Schedule, Source, SourceValidation };

/** What the service answers in place of a secret field's value. */
export const MASK = '********';

/** The part of JSON Schema the source types' config schemas use (TypeBox's output). */
export interface JsonSchema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  enum?: string[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  pattern?: string;
  format?: string;
  writeOnly?: boolean;
  'x-secret'?: boolean;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: { required?: string[] }[];
}

type SourceTypeSummary = SourceTypes['source_types'][number];

/** GET /ingestion/source-types/{type}: a type as GET /ingestion/source-types lists it, with its config's schema (a JSON Schema the service builds, which it names no type for). */
export interface SourceTypeSchema extends SourceTypeSummary {
  secret_fields: string[];
  schema: JsonSchema;
}

/** The statuses of a job's files, in the order the page counts them (jobs/records.ts's FILE_STATUSES). */
export const FILE_STATUSES = ['pending', 'processing', 'completed', 'failed', 'skipped'] as const satisfies readonly JobFile['status'][];

export function isActiveJob(job: Pick<Job, 'status'>): boolean {
  return job.status === 'pending' || job.status === 'running';
}

const made = new WeakMap<Api, Ingestion>();

/** The pages' Ingestion for the tab's client (one per signed-in client). */
export function ingestionOf(api: Api, apiKey: string): Ingestion {
  let one = made.get(api);
  if (!one) made.set(api, (one = new Ingestion(api, apiKey)));
  return one;
}

export class Ingestion {
  constructor(
    private readonly api: Api,
    private readonly apiKey: string,
  ) {}

  private get c() {
    return this.api.sable;
  }

  // Sources.
  sourceTypes(): Promise<SourceTypes> {
    return this.c.call('GET', '/ingestion/source-types');
  }
  sourceType(type: string): Promise<SourceTypeSchema> {
    return this.c.call('GET', `/ingestion/source-types/${enc(type)}`);
  }
  listSources(limit: number, offset: number): Promise<SourceList> {
    return this.c.call('GET', '/ingestion/sources', { query: { limit, offset } });
  }
  getSource(id: string): Promise<Source> {
    return this.c.call('GET', `/ingestion/sources/${enc(id)}`);
  }
  validateSource(sourceType: string, config: Record<string, unknown>): Promise<SourceValidation> {
    return this.c.call('POST', '/ingestion/sources/validate', { body: { source_type: sourceType, config } });
  }
  createSource(body: { source_type: string; name: string; description?: string; config: Record<string, unknown> }): Promise<Source> {
    return this.c.createSource(body as SourceCreate);
  }
  /** 409 source_in_use while a schedule or a job uses it; `force` disables its schedules first. */
  async deleteSource(id: string, force: boolean): Promise<void> {
    await this.c.call('DELETE', `/ingestion/sources/${enc(id)}`, { query: force ? { force: true } : {} });
  }
  references(id: string): Promise<SourceReferences> {
    return this.c.call('GET', `/ingestion/sources/${enc(id)}/references`);
  }

  // Uploads to a file_upload source: init, one PUT per file, complete.
  uploadInit(sourceId: string, datasetId: string, files: { name: string; size_bytes: number; content_type: string }[]): Promise<SourceUploadAnswer> {
    return this.c.call('POST', `/ingestion/sources/${enc(sourceId)}/upload/init`, { body: { dataset_id: datasetId, files } });
  }
  uploadComplete(sourceId: string, jobId: string, fileIds: string[]): Promise<SourceUploadComplete> {
    return this.c.call('POST', `/ingestion/sources/${enc(sourceId)}/upload/complete`, { body: { job_id: jobId, file_ids: fileIds } });
  }

  // Jobs.
  startJob(sourceId: string, datasetId: string): Promise<Job> {
    return this.c.call('POST', '/ingestion/jobs', { body: { source_id: sourceId, dataset_id: datasetId } });
  }
  listJobs(limit: number, offset: number, datasetId?: string): Promise<JobList> {
    return this.c.call('GET', '/ingestion/jobs', { query: { limit, offset, dataset_id: datasetId || undefined } });
  }
  getJob(id: string): Promise<Job> {
    return this.c.getJob(id);
  }
  jobFiles(id: string, limit: number, offset: number, status?: string): Promise<JobFiles> {
    return this.c.call('GET', `/ingestion/jobs/${enc(id)}/files`, { query: { limit, offset, status: status || undefined } });
  }
  statistics(id: string): Promise<JobStatistics | null> {
    return this.c.call('GET', `/ingestion/jobs/${enc(id)}/statistics`);
  }
  /** A fresh job over the same files (failed or cancelled jobs, and jobs whose every file failed). */
  retry(id: string): Promise<Job> {
    return this.c.call('POST', `/ingestion/jobs/${enc(id)}/retry`);
  }

  // Schedules.
  listSchedules(limit: number, offset: number): Promise<ScheduleList> {
    return this.c.call('GET', '/ingestion/schedules', { query: { limit, offset } });
  }
  createSchedule(body: ScheduleCreate): Promise<Schedule> {
    return this.c.call('POST', '/ingestion/schedules', { body });
  }
  setScheduleEnabled(id: string, enabled: boolean): Promise<Schedule> {
    return this.c.call('PATCH', `/ingestion/schedules/${enc(id)}`, { body: { enabled } });
  }
  async deleteSchedule(id: string): Promise<void> {
    await this.c.call('DELETE', `/ingestion/schedules/${enc(id)}`);
  }
  triggerSchedule(id: string): Promise<Job> {
    return this.c.call('POST', `/ingestion/schedules/${enc(id)}/trigger`);
  }

  // The document catalog.
  documents(datasetId: string, limit: number, cursor: string | null, status: string): Promise<DocumentList> {
    return this.c.call('GET', `/datasets/${enc(datasetId)}/documents`, { query: { limit, cursor: cursor ?? undefined, status: status || undefined } });
  }

  /**
   * A document's original, fetched with the key in its header. A redirect is not followed: the
   * service redirects to object storage's signed URL, which the page's Content-Security-Policy
   * does not let it fetch, and following it would send the key along to that other host.
   */
  async download(datasetId: string, documentId: string): Promise<{ blob: Blob; name: string | null }> {
    const res = await fetch(`${location.origin}/datasets/${enc(datasetId)}/documents/${enc(documentId)}/download`, {
      headers: { 'x-api-key': this.apiKey, 'x-request-id': crypto.randomUUID() },
      redirect: 'manual',
    });
    if (res.type === 'opaqueredirect') {
      throw new Error('the service keeps this original in object storage and answered with a redirect to it, which the dashboard cannot follow (its pages fetch from the service only)');
    }
    if (!res.ok) throw errorOf(res.status, await res.text(), res.headers.get('x-request-id'));
    return { blob: await res.blob(), name: fileNameOf(res.headers.get('content-disposition')) };
  }
}

/**
 * PUTs one file to its upload URL with an XMLHttpRequest, for the upload's progress events
 * (fetch has none). The URL is self-authenticating: no key goes with it.
 */
export function putFile(url: string, file: Blob, contentType: string, onProgress: (sent: number, total: number) => void, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', reachable(url));
    xhr.setRequestHeader('content-type', contentType);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(errorOf(xhr.status, xhr.responseText, xhr.getResponseHeader('x-request-id'))));
    xhr.onerror = () => reject(new TypeError('the upload did not reach the service'));
    xhr.onabort = () => reject(new Error('the upload was cancelled'));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/**
 * The local store signs its upload URLs on a second listener (the service's port + 1, a node:http
 * server for files past uWebSockets.js's 1 GB limit), another origin the page's Content-Security-
 * Policy (connect-src 'self') refuses. The service's own port routes the same PUT /uploads/{token}:
 * a URL on this page's host is sent there. Object storage's URLs (S3) are left as they are.
 */
export function reachable(url: string): string {
  const u = new URL(url, location.href);
  if (u.origin !== location.origin && u.hostname === location.hostname && u.pathname.startsWith('/uploads/')) return location.origin + u.pathname + u.search;
  return u.href;
}

/** The content type a file is declared with: the browser's, else one its extension names. */
export function contentTypeOf(file: File): string {
  if (file.type) return file.type;
  const ext = file.name.slice(file.name.lastIndexOf('.') + 1).toLowerCase();
  return EXTENSION_TYPES[ext] ?? 'application/octet-stream';
}

const EXTENSION_TYPES: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

/** A failure answered outside the typed client, as the client throws it. */
function errorOf(status: number, text: string, requestId: string | null): SableApiError {
  let body: { error: string; message: string };
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: `http_${status}`, message: text.slice(0, 200) || `the service answered ${status}` };
  }
  return new SableApiError(status, body.error, body.message, requestId, body);
}

/** The file name of `attachment; filename*=UTF-8''<percent-encoded>`. */
function fileNameOf(disposition: string | null): string | null {
  const m = disposition ? /filename\*=UTF-8''([^;]+)/i.exec(disposition) : null;
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

const enc = encodeURIComponent;
