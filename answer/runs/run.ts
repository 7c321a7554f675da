/**
 * One run of a question: the chunks it streams, numbered by one `seq` across every chunk type (an
 * SSE `id:` line, a `Last-Event-ID`, and `/events?after=` all speak it), its trace events, the
 * answer so far, and who is listening. A run outlives its listeners: a stream that drops leaves
 * it running for a grace period, so a caller can re-attach; past it the work is cancelled. The
 * record stays readable for the retention period either way.
 */
export const CHUNK_TYPES = ['event', 'text', 'artifact', 'citation', 'metadata', 'error', 'done'] as const;
export type ChunkType = (typeof CHUNK_TYPES)[number];
export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'rate_limited', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type Phase = 'received' | 'resolve' | 'plan' | 'route' | 'act' | 'synthesize' | 'done';
export type EventStatus = 'started' | 'ok' | 'warning' | 'error';

export interface StreamChunk {
  seq: number;
  chunk_type: ChunkType;
  content: string;
  metadata: Record<string, unknown>;
}

export interface TraceEventInput {
  phase: Phase;
  action: string;
  status: EventStatus;
  summary: string;
  step?: number;
  tool?: string;
  ms?: number;
  detail?: Record<string, unknown>;
}

export interface TraceEvent extends TraceEventInput {
  seq: number;
  at: string;
}

type Listener = (chunk: StreamChunk) => void;
/** A recorder of the run: what it returns for `done` is waited for before `done` is sent. */
type Observer = (chunk: StreamChunk) => void | Promise<void>;

/**
 * Longest `done` waits for the recorders: a client that got `done` then reads the run anywhere
 * (another node, the next process) finds it ended, unless recording is this late (its database
 * away), when the stream's end is not held back further.
 */
const DONE_RECORD_WAIT_MS = 5000;

export class Run {
  status: RunStatus = 'running';
  answer = '';
  readonly chunks: StreamChunk[] = [];
  readonly events: TraceEvent[] = [];
  readonly startedAt = Date.now();
  endedAt: number | null = null;
  /** The whole answer (what a JSON request gets), set just before `done`. */
  result: unknown = null;
  /** Why a failed run failed. */
  failure: { code: string; message: string } | null = null;
  /** Aborted when the run must stop: cancelled (no listener came back), or the service closing. */
  readonly abort = new AbortController();
  private readonly listeners = new Set<Listener>();
  /** Who records every chunk (the cluster's run log): not a listener, so it never holds the run open. */
  private readonly observers: Observer[] = [];
  private detachTimer: NodeJS.Timeout | null = null;
  private readonly ended: Promise<void>;
  private resolveEnded!: () => void;

  constructor(
    readonly id: string,
    readonly orgId: string,
    readonly query: string,
    private readonly graceMs: number,
  ) {
    this.ended = new Promise((r) => (this.resolveEnded = r));
  }

  get running(): boolean {
    return this.status === 'running';
  }

  get lastSeq(): number {
    return this.chunks.length;
  }

  /** Resolves when `done` has been sent. */
  whenEnded(): Promise<void> {
    return this.ended;
  }

  /** A trace event: `content` is its summary, `metadata` every field of it. */
  event(e: TraceEventInput): TraceEvent {
    const seq = this.chunks.length + 1;
    const at = new Date().toISOString();
    const ev: TraceEvent = { seq, ...e, at };
    this.events.push(ev);
    this.push({ seq, chunk_type: 'event', content: e.summary, metadata: { run_id: this.id, ...withoutUndefined({ ...e }), seq } });
    return ev;
  }

  text(content: string): void {
    if (content === '') return;
    this.answer += content;
    this.push({ seq: this.chunks.length + 1, chunk_type: 'text', content, metadata: {} });
  }

  chunk(type: Exclude<ChunkType, 'event' | 'text' | 'done'>, content: string, metadata: Record<string, unknown>): void {
    this.push({ seq: this.chunks.length + 1, chunk_type: type, content, metadata });
  }

  /** The last chunk: nothing is sent after it. */
  finish(status: Exclude<RunStatus, 'running'>, metadata: Record<string, unknown> = {}): void {
    if (!this.running) return;
    this.status = status;
    this.endedAt = Date.now();
    if (this.detachTimer) clearTimeout(this.detachTimer);
    const done: StreamChunk = { seq: this.chunks.length + 1, chunk_type: 'done', content: '', metadata: { run_id: this.id, status, ...metadata } };
    this.chunks.push(done);
    const recording = this.observers.map((o) => o(done)).filter((r): r is Promise<void> => r instanceof Promise);
    const deliver = () => {
      for (const l of this.listeners) l(done);
      this.listeners.clear();
      this.resolveEnded();
    };
    if (recording.length === 0) return deliver();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, DONE_RECORD_WAIT_MS)));
    void Promise.race([Promise.allSettled(recording), late]).then(() => {
      clearTimeout(timer);
      deliver();
    });
  }

  /**
   * Sends every chunk after `after` to `listener`, then each new one as it comes. The returned
   * function detaches; when the last listener of a running run leaves, the grace period starts.
   */
  attach(after: number, listener: Listener): () => void {
    for (const c of this.chunks) if (c.seq > after) listener(c);
    if (!this.running) return () => undefined;
    this.listeners.add(listener);
    if (this.detachTimer) clearTimeout(this.detachTimer);
    this.detachTimer = null;
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0 || !this.running) return;
      this.detachTimer = setTimeout(() => {
        if (this.running && this.listeners.size === 0) this.abort.abort(new Error('the client went away'));
      }, this.graceMs);
      this.detachTimer.unref();
    };
  }

  /**
   * Calls `observer` with every chunk sent so far and each one after, without counting as a
   * listener; `done` reaches the listeners once what the observer returned for it settled.
   */
  observe(observer: Observer): void {
    for (const c of this.chunks) observer(c);
    this.observers.push(observer);
  }

  /** The run as `GET /intelligence/runs/{id}/events?after=` shows it. */
  record(after = 0) {
    return { run_id: this.id, status: this.status, events: this.events.filter((e) => e.seq > after), last_seq: this.lastSeq, answer: this.answer };
  }

  private push(c: StreamChunk): void {
    if (!this.running && c.chunk_type !== 'done') return;
    this.chunks.push(c);
    for (const o of this.observers) o(c);
    for (const l of this.listeners) l(c);
  }
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
