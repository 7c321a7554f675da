/**
 * A run read back from this machine's disk (local-run-log.ts): one an earlier process answered, or
 * this process answered and no longer holds in memory. Every such run has ended (a run left
 * running by a process that died is ended when the next one starts), so the view is fixed: its
 * chunks are all there is, and `attach` replays them and is done.
 */
import type { RunRecordView, RunView } from './run-view.js';
import type { RunStatus, StreamChunk, TraceEvent } from './run.js';

/** A run's row on disk: what the routes need besides its chunks. */
export interface RecordedRunRow {
  query: string;
  status: RunStatus;
  result: unknown;
  failure: { code: string; message: string } | null;
  started_at: number;
  /** Epoch ms; null while the run was running when the row was written. */
  ended_at: number | null;
}

/** A chunk on disk; a trace event keeps its time, which its chunk does not carry. */
export interface RecordedChunk {
  chunk: StreamChunk;
  at?: string;
}

export class RecordedRun implements RunView {
  constructor(
    readonly id: string,
    private readonly row: RecordedRunRow,
    private readonly chunks: readonly RecordedChunk[],
  ) {}

  get query(): string {
    return this.row.query;
  }

  get status(): RunStatus {
    return this.row.status;
  }

  get running(): boolean {
    return false;
  }

  get lastSeq(): number {
    return this.chunks.at(-1)?.chunk.seq ?? 0;
  }

  get result(): unknown {
    return this.row.result;
  }

  get failure(): { code: string; message: string } | null {
    return this.row.failure;
  }

  record(after = 0): RunRecordView {
    const events: TraceEvent[] = [];
    let answer = '';
    for (const { chunk, at } of this.chunks) {
      if (chunk.chunk_type === 'text') answer += chunk.content;
      if (chunk.chunk_type !== 'event' || chunk.seq <= after) continue;
      // The chunk's metadata is the event's fields with run_id and seq added (run.ts `event`).
      const { run_id: _, seq: __, ...fields } = chunk.metadata;
      events.push({ seq: chunk.seq, ...(fields as Omit<TraceEvent, 'seq' | 'at'>), at: at ?? '' });
    }
    return { run_id: this.id, status: this.status, events, last_seq: this.lastSeq, answer };
  }

  attach(after: number, listener: (chunk: StreamChunk) => void): () => void {
    for (const { chunk } of this.chunks) if (chunk.seq > after) listener(chunk);
    return () => undefined;
  }

  whenEnded(): Promise<void> {
    return Promise.resolve();
  }
}
