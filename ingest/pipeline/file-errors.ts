/**
 * The typed reasons a file of an ingest job fails with, from whatever was thrown: the source's
 * own failures while fetching, the file's time bound, and errors no one typed (logged: those are
 * ours to look at).
 */
import { SableError } from '../../errors/codes.js';
import { FileError } from '../../errors/job-errors.js';
import { Interrupted } from '../../jobs/runner.js';

/** A fetch that failed untyped is the source's: `source_unreachable` (typed errors, stops and the time bound pass as they are). */
export function fetchFailure(e: unknown, timedOut: boolean): unknown {
  if (e instanceof FileError || e instanceof SableError || e instanceof Interrupted || timedOut) return e;
  return new FileError('source_unreachable', (e as Error)?.message ?? String(e));
}

/** Why the file failed: its time bound when that passed, else the error's own type, else `internal`. */
export function fileFailure(e: unknown, timedOut: boolean, timeoutMs: number, where: string): FileError {
  if (!(e instanceof FileError) && !(e instanceof SableError) && !(e instanceof Interrupted)) console.error(`sable: ${where}:`, e);
  if (timedOut) return new FileError('timed_out', `the file took longer than ${Math.round(timeoutMs / 1000)} s`);
  if (e instanceof FileError) return e;
  if (e instanceof SableError) return new FileError(e.code, e.message);
  return new FileError('internal', (e as Error)?.message ?? String(e));
}
