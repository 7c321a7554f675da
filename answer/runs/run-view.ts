/**
 * What the routes read of a run: its status, trace, answer and chunks, live until `done`. A run
 * of this process is a `Run`; in a cluster, a run another node is answering (or answered) is
 * read from the cluster's run log (cluster/run-log.ts) through the same surface, so a stream
 * started on one node resumes on another with `Last-Event-ID`; embedded, a run of an earlier
 * process is read from the disk (local-run-log.ts), so a stream resumes after a restart.
 */
import type { RunStatus, StreamChunk, TraceEvent } from './run.js';

export interface RunRecordView {
  run_id: string;
  status: RunStatus;
  events: TraceEvent[];
  last_seq: number;
  answer: string;
}

export interface RunView {
  readonly id: string;
  readonly query: string;
  readonly status: RunStatus;
  readonly running: boolean;
  readonly lastSeq: number;
  /** The whole answer (what a JSON request gets), once the run succeeded. */
  readonly result: unknown;
  readonly failure: { code: string; message: string } | null;
  record(after?: number): RunRecordView;
  /** Every chunk after `after`, then each new one until `done`; the function returned detaches. */
  attach(after: number, listener: (chunk: StreamChunk) => void): () => void;
  /** Resolves when `done` has been sent. */
  whenEnded(): Promise<void>;
}

/**
 * Where runs are recorded as they go, and found when this process does not hold them: in a
 * cluster, the runs of every node (cluster/run-log.ts); embedded, this machine's runs on disk,
 * those of earlier processes included (local-run-log.ts).
 */
export interface RemoteRuns {
  /** Records the run as it goes (its chunks, its end) for the other nodes, or the next process, to read. */
  track(run: import('./run.js').Run): void;
  /** A run of another node (or of an earlier process), or undefined. */
  find(orgId: string, id: string): Promise<RunView | undefined>;
  /** Writes what is still pending, once the runs have ended (the service is closing). */
  close?(): Promise<void>;
}
