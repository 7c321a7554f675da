/**
 * `file_upload` sources: files arrive through presigned uploads (upload/init, PUT, complete), each
 * upload a job of its own. Their bytes stay in the service's object storage, so documents made
 * from them can be downloaded again. A job started with POST /ingestion/jobs ingests the latest
 * upload of every file name the source holds.
 */
import type { JobQueue } from '../../jobs/queue.js';
import type { ObjectStore, StagedFile } from '../../objects/object-store.js';
import type { Connector, ConnectorContext, ItemRef, SourceItem, Validation } from './connector.js';

export class FileUploadConnector implements Connector {
  readonly type = 'file_upload' as const;
  readonly retainsOriginals = true;

  constructor(
    private readonly jobs: JobQueue,
    private readonly objects: ObjectStore,
    /** Files past this size are not parsed (the upload itself may be larger). */
    private readonly maxFileBytes: number,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const latest = new Map<string, { item: SourceItem; at: string }>();
    for (const job of await this.jobs.ofSource(ctx.sourceId)) {
      for (const f of await this.jobs.files(job.job_id)) {
        if (!f.uploaded_at || f.status === 'failed' || f.status === 'skipped' || !f.storage_key) continue;
        const seen = latest.get(f.file_name);
        if (seen && seen.at >= f.uploaded_at) continue;
        if ((await this.objects.size(f.storage_key)) === null) continue;
        latest.set(f.file_name, {
          at: f.uploaded_at,
          item: { id: f.file_name, name: f.file_name, path: f.file_name, url: null, contentType: f.content_type, size: f.file_size_bytes, version: f.storage_key },
        });
      }
    }
    for (const { item } of latest.values()) yield item;
  }

  /** Upload jobs' files carry their storage key; listed items carry it as their version. */
  fetch(_ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    return this.objects.stage(item.storage_key ?? item.item?.version ?? item.file_path);
  }

  async validate(): Promise<Validation> {
    return { samples: [], warnings: [] };
  }

  maxBytes(): number {
    return this.maxFileBytes;
  }
}
