/**
 * Starting ingestion jobs: from a source into a dataset (POST /ingestion/jobs, a schedule), or
 * from files uploaded to a file_upload source (upload/init, then upload/complete).
 */
import type { DatasetService } from '../catalog/datasets/service.js';
import { badRequest } from '../errors/codes.js';
import type { JobQueue } from '../jobs/queue.js';
import { newJob, queued, type JobRecord } from '../jobs/records.js';
import type { JobRunner } from '../jobs/runner.js';
import type { FileDeclared, Upload, UploadJobs } from '../jobs/uploads.js';
import type { SourceService } from './sources/service.js';

export class IngestJobs {
  constructor(
    private readonly jobs: JobQueue,
    private readonly uploads: UploadJobs,
    private readonly runner: JobRunner,
    private readonly sources: SourceService,
    private readonly datasets: DatasetService,
  ) {}

  /** A queued job that reads the source into the dataset (every item, listed anew). */
  async start(orgId: string, sourceId: string, datasetId: string, scheduleId?: string): Promise<JobRecord> {
    const source = this.sources.get(orgId, sourceId);
    const dataset = this.datasets.get(orgId, datasetId);
    const job = queued(newJob({ kind: 'ingest', orgId, datasetId: dataset.id, validateOnly: false, idempotencyKey: null, sourceId: source.id, scheduleId }), 0, `queued: read ${source.type} source ${source.name}`);
    await this.jobs.create(job, []);
    this.runner.wake();
    return job;
  }

  /** An upload to a file_upload source: a job waiting for the files' bytes. */
  async initUpload(orgId: string, sourceId: string, datasetId: string, files: FileDeclared[], uploadBase: string): Promise<{ job_id: string; uploads: Upload[] }> {
    const source = this.sources.get(orgId, sourceId);
    if (source.type !== 'file_upload') throw badRequest(`source ${source.id} is a ${source.type} source: uploads go to file_upload sources`);
    const dataset = this.datasets.get(orgId, datasetId);
    const job = newJob({ kind: 'ingest', orgId, datasetId: dataset.id, validateOnly: false, idempotencyKey: null, sourceId: source.id });
    job.discovered = true;
    return this.uploads.init(job, files, { prefix: `sources/${source.id}`, uploadBase, pathIsName: true });
  }

  async completeUpload(orgId: string, sourceId: string, jobId: string, fileIds: string[]): Promise<{ confirmed: number; job_id: string }> {
    const source = this.sources.get(orgId, sourceId);
    const job = await this.uploads.owned(jobId, orgId, (j) => j.source_id === source.id, `source ${source.id}`);
    const confirmed = await this.uploads.complete(job, fileIds);
    this.runner.wake();
    return { confirmed, job_id: job.job_id };
  }
}
