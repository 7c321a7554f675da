/** A job's (a file's, a document's) state in a word, with its progress while it runs and its current step when it has one. */
import type { Job } from '../ingestion.js';

const TONE: Record<string, string> = { completed: 'ok', ready: 'ok', failed: 'bad', cancelled: 'bad', running: 'warn', pending: 'warn', processing: 'warn' };

export function StatusTag({ status }: { status: string }) {
  return <span class={`tag ${TONE[status] ?? ''}`}>{status}</span>;
}

export function JobProgress({ job, label }: { job: Pick<Job, 'status' | 'progress_percentage' | 'current_step'>; label: string }) {
  const pct = Math.round(job.progress_percentage);
  return (
    <span class="job-progress">
      <StatusTag status={job.status} />
      <progress max={100} value={job.progress_percentage} aria-label={label} />
      <span class="small">{pct} %</span>
      {job.current_step && <span class="small muted step">{job.current_step}</span>}
    </span>
  );
}
