/**
 * Which attempt at a job the code now running belongs to, and which schedule tick it fires, for
 * the queues that fence by them (cluster/pg-job-queue.ts). The runner runs each attempt, and the
 * scheduler each firing, inside a context (AsyncLocalStorage, so it follows every await of the
 * handler without the handlers passing it): a queue that keeps a job's latest attempt refuses a
 * write of an older one (LeaseLost), and a queue that keys a schedule's jobs by tick refuses a
 * second job for one tick (TickTaken). The LMDB queue of one machine reads neither.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Thrown by a handler at a checkpoint when its context says to stop. */
export class Interrupted extends Error {
  constructor(message = 'the job was interrupted') {
    super(message);
  }
}

/**
 * A write of an attempt that is no longer the job's latest: its lease lapsed and another runner
 * took the job (a newer attempt). Nothing was written; the attempt stops where it is, leaving
 * the job to the newer one. An Interrupted, so handlers pass it through as they pass a stop.
 */
export class LeaseLost extends Interrupted {
  constructor(
    readonly jobId: string,
    readonly attempt: number,
    readonly latest: number | null,
  ) {
    super(`attempt ${attempt} lost its lease${latest === null ? ' (the job is gone)' : ` to attempt ${latest}`}`);
  }
}

/** The job of this schedule tick was made already (by another node, or before a restart). */
export class TickTaken extends Error {
  constructor(
    readonly scheduleId: string,
    readonly tick: string,
  ) {
    super(`schedule ${scheduleId} has its job for ${tick} already`);
  }
}

export interface Attempt {
  jobId: string;
  /** The attempt's number (the job's `attempts` once claimed): its fence. */
  fence: number;
}

export interface Tick {
  scheduleId: string;
  /** The occurrence fired, ISO 8601 (the schedule's next_run_at before it moved on). */
  tick: string;
}

const attempts = new AsyncLocalStorage<Attempt>();
const ticks = new AsyncLocalStorage<Tick>();

/** Runs `fn` as attempt `a`: what it writes to `a.jobId` is fenced by `a.fence`. */
export function asAttempt<T>(a: Attempt, fn: () => T): T {
  return attempts.run(a, fn);
}

/** The attempt writing to `jobId` now, if the code running is one. */
export function attemptOf(jobId: string): Attempt | undefined {
  const a = attempts.getStore();
  return a?.jobId === jobId ? a : undefined;
}

/** Runs `fn` as the firing of tick `t`: a job it makes for `t.scheduleId` is that tick's. */
export function atTick<T>(t: Tick, fn: () => T): T {
  return ticks.run(t, fn);
}

/** The tick a job of `scheduleId` made now is for, if the code running is that schedule's firing. */
export function tickOf(scheduleId: string | null): Tick | undefined {
  const t = ticks.getStore();
  return scheduleId !== null && t?.scheduleId === scheduleId ? t : undefined;
}
