/**
 * Runs jobs: takes the oldest runnable job from the queue under a lease, hands it to the handler
 * of its kind, renews the lease while it runs, and bounds it in time. A job taken again after
 * its runner stopped or died (attempts > 1) is resumed by its handler; one that keeps dying
 * ends failed. Every state change is in the queue first, so a restart finds each job where it
 * was, and every job ends completed or failed with a reason.
 */
import { SableError } from '../errors/codes.js';
import type { JobErrorType } from '../errors/job-errors.js';
import type { JobQueue } from './queue.js';
import { UPLOAD_URL_SECONDS } from '../objects/object-store.js';
import { failedFile, finish, isActive, isOpen, newJob, queued, type FileRecord, type JobKind, type JobRecord } from './records.js';
import { asAttempt, Interrupted, LeaseLost } from './attempts.js';

export { Interrupted, LeaseLost };

export interface JobContext {
  /** True once the job must stop (the runner closes, the lease was lost or lapsed by this
   * process's clock, the time bound passed): the handler stops at its next checkpoint by throwing
   * Interrupted. */
  stopping(): boolean;
  readonly signal: AbortSignal;
  /** The lease lapsed by this process's clock (it was paused or starved past it): another attempt
   * may hold the job now, so this one must not undo anything (a failure it met is no one's to record). */
  lapsed(): boolean;
  /** The job was taken before by a runner that stopped or died: its handler picks up from there. */
  readonly resumed: boolean;
}

export interface JobHandler {
  readonly kind: JobKind;
  /** Wall time one attempt may take; past it the job fails `timed_out`. None: unbounded. */
  readonly timeoutMs?: number;
  /** Runs the job until it is completed or failed (written to the queue), or throws Interrupted. */
  run(job: JobRecord, ctx: JobContext): Promise<void>;
  /** The files of a fresh job that reruns `job` in full (POST /ingestion/jobs/{id}/retry). */
  filesForRetry(job: JobRecord, fresh: JobRecord): Promise<FileRecord[]>;
  /** The runner ended the job failed itself (time bound, too many attempts): what the kind keeps beside the job ends too. */
  abandoned?(job: JobRecord): Promise<void>;
}

export interface RunnerOptions {
  /** Lease length; renewed every third of it. */
  leaseMs?: number;
  /** How often an idle runner looks for work (a job queued here wakes it at once). */
  pollMs?: number;
  /** Takes of one job before it ends failed `too_many_attempts`. */
  maxAttempts?: number;
  /** Jobs run at once. */
  concurrency?: number;
  /** How long a job waits for its upload to be completed before it ends failed `upload_expired`. */
  uploadWindowMs?: number;
}

/** The upload URLs' life, and some slack for a PUT that started just before they expired. */
const UPLOAD_WINDOW_MS = (UPLOAD_URL_SECONDS + 15 * 60) * 1000;
/** How often abandoned uploads are looked for. */
const SWEEP_MS = 60_000;

export class JobRunner {
  private readonly handlers = new Map<JobKind, JobHandler>();
  private readonly owner: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly maxAttempts: number;
  private readonly concurrency: number;
  private readonly uploadWindowMs: number;
  private lastSweep = 0;
  private loops: Promise<void>[] = [];
  private stopping = false;
  private readonly stop = new AbortController();
  private wakeUp: (() => void)[] = [];

  constructor(
    private readonly queue: JobQueue,
    handlers: JobHandler[],
    opts: RunnerOptions = {},
  ) {
    for (const h of handlers) this.handlers.set(h.kind, h);
    this.owner = queue.newOwner();
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.pollMs = opts.pollMs ?? 1000;
    this.maxAttempts = opts.maxAttempts ?? 10;
    this.concurrency = opts.concurrency ?? 1;
    this.uploadWindowMs = opts.uploadWindowMs ?? UPLOAD_WINDOW_MS;
  }

  /** Starts taking jobs: first those a stopped or dead runner left running, in queue order. */
  start(): void {
    for (let i = 0; i < this.concurrency; i++) this.loops.push(this.loop());
  }

  /** A job became runnable: an idle runner takes it now rather than at its next poll. */
  wake(): void {
    for (const w of this.wakeUp.splice(0)) w();
  }

  /** A fresh full rerun of a failed or cancelled job (or of one whose every file failed). */
  async retry(job: JobRecord): Promise<JobRecord> {
    const files = await this.queue.files(job.job_id);
    const everyFileFailed = files.length > 0 && files.every((f) => f.status === 'failed');
    if (job.status === 'completed' && !everyFileFailed) {
      throw new SableError('job_not_retryable', `job ${job.job_id} completed; only failed or cancelled jobs can be retried`);
    }
    if (isActive(job)) throw new SableError('job_not_retryable', `job ${job.job_id} is still ${job.status}`);
    const handler = this.handlerOf(job);
    const created = newJob({ kind: job.kind, orgId: job.org_id, datasetId: job.dataset_id, validateOnly: job.validate_only, idempotencyKey: null, retryOf: job.job_id });
    const copies = await handler.filesForRetry(job, created);
    const fresh = queued(created, copies.length, `retry of job ${job.job_id}`);
    await this.queue.create(fresh, copies);
    this.wake();
    return fresh;
  }

  /** Stops at the running jobs' next checkpoints; they stay running and resume on the next start. */
  async close(): Promise<void> {
    this.stopping = true;
    this.stop.abort();
    this.wake();
    await Promise.all(this.loops);
    this.queue.retireOwner(this.owner);
  }

  private handlerOf(job: JobRecord): JobHandler {
    const h = this.handlers.get(job.kind);
    if (!h) throw new SableError('internal', `no handler for jobs of kind ${job.kind}`);
    return h;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let job: JobRecord | null = null;
      const asked = Date.now();
      try {
        job = await this.queue.claim(this.owner, [...this.handlers.keys()], this.leaseMs);
      } catch (e) {
        console.error('sable: the job queue could not be read:', e);
      }
      if (job) await this.runOne(job, asked + this.leaseMs);
      else {
        await this.expireUploads().catch((e) => console.error('sable: abandoned uploads could not be expired:', e));
        await this.idle();
      }
    }
  }

  /** A job whose upload was never completed ends failed once its URLs are long expired. */
  private async expireUploads(): Promise<void> {
    if (Date.now() - this.lastSweep < Math.min(SWEEP_MS, this.uploadWindowMs)) return;
    this.lastSweep = Date.now();
    const before = new Date(Date.now() - this.uploadWindowMs).toISOString();
    for (const job of await this.queue.unconfirmed(before)) {
      const message = `the upload was not completed within ${Math.round(this.uploadWindowMs / 60_000)} minutes (its URLs expired); start a new one`;
      const files = (await this.queue.files(job.job_id)).filter((f) => f.status === 'pending');
      await this.queue.put(
        finish(job, 'failed', { type: 'upload_expired', message }),
        files.map((f) => failedFile(f, f.uploaded_at ? 'upload_expired' : 'upload_missing', f.uploaded_at ? message : 'no bytes were uploaded before the URLs expired')),
      );
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, this.pollMs);
      this.wakeUp.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /**
   * One attempt, as attempt `job.attempts` (jobs/attempts.ts): a queue that fences refuses its
   * writes once a newer attempt took the job, and the attempt then stops without a word more.
   */
  private runOne(job: JobRecord, leaseUntil: number): Promise<void> {
    return asAttempt({ jobId: job.job_id, fence: job.attempts }, () => this.attempt(job, leaseUntil));
  }

  /**
   * `leaseUntil`: when the lease ends at the latest by this process's clock (the claim or the
   * last renewal was asked for then, less than a lease before the database set it). Past it the
   * attempt stops at its next checkpoint, before any renewal answers: a process paused past its
   * lease (SIGSTOP, a stalled machine) finds it so the moment it runs again.
   */
  private async attempt(job: JobRecord, leaseUntil: number): Promise<void> {
    if (job.attempts > this.maxAttempts) {
      await this.fail(job.job_id, 'too_many_attempts', `the job was started ${job.attempts - 1} times and never ended (each run stopped the service?)`);
      return;
    }
    const handler = this.handlers.get(job.kind)!;
    const own = new AbortController();
    const why: { lost?: boolean; timedOut?: boolean } = {};
    const signal = AbortSignal.any([this.stop.signal, own.signal]);
    const renewal = setInterval(() => {
      const asked = Date.now();
      void this.queue.renew(job.job_id, this.owner, this.leaseMs).then(
        (held) => {
          if (held) leaseUntil = Math.max(leaseUntil, asked + this.leaseMs);
          if (held || why.lost) return;
          why.lost = true;
          console.error(`sable: job ${job.job_id}: attempt ${job.attempts} lost its lease (its renewal was refused); this attempt stops`);
          own.abort();
        },
        (e) => console.error(`sable: job ${job.job_id}: lease not renewed:`, e),
      );
    }, Math.max(100, this.leaseMs / 3));
    const deadline = handler.timeoutMs === undefined ? undefined : setTimeout(() => ((why.timedOut = true), own.abort()), handler.timeoutMs);
    const lapsed = () => Date.now() >= leaseUntil;
    const ctx: JobContext = { stopping: () => signal.aborted || lapsed(), signal, lapsed, resumed: job.attempts > 1 };
    try {
      await handler.run(job, ctx);
    } catch (e) {
      if (e instanceof LeaseLost) {
        console.error(`sable: job ${job.job_id}: ${e.message}; this attempt stops, its writes refused`);
        return;
      }
      if (why.lost) return;
      if (why.timedOut) {
        await this.fail(job.job_id, 'timed_out', `the job ran past its ${handler.timeoutMs} ms bound`);
      } else if (e instanceof Interrupted) {
        if (!this.stopping && Date.now() >= leaseUntil) {
          console.error(`sable: job ${job.job_id}: attempt ${job.attempts} outlived its lease (no renewal for ${this.leaseMs} ms: the process was paused or starved); it stops, the job is taken again`);
        }
        await this.queue.release(job.job_id, this.owner).catch(() => {});
      } else {
        console.error(`sable: job ${job.job_id} broke:`, e);
        const code = e instanceof SableError ? e.code : 'internal';
        await this.fail(job.job_id, code, (e as Error).message);
      }
    } finally {
      clearInterval(renewal);
      clearTimeout(deadline);
    }
  }

  /** Ends a job failed from outside its handler: its unfinished files end with the same reason. */
  private async fail(jobId: string, type: JobErrorType, message: string): Promise<void> {
    try {
      const job = await this.queue.get(jobId);
      if (!job) return;
      const open = (await this.queue.files(jobId)).filter(isOpen);
      const ended = finish(job, 'failed', { type, message });
      await this.queue.put(ended, open.map((f) => failedFile(f, type, message)));
      await this.handlers.get(job.kind)?.abandoned?.(ended);
    } catch (e) {
      if (e instanceof LeaseLost) console.error(`sable: job ${jobId}: ${e.message}; its failure (${type}) was not recorded`);
      else console.error(`sable: job ${jobId}: its failure was not recorded:`, e);
    }
  }
}
