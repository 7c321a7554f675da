/**
 * The Ask page's calls: chat sessions and their messages, the passages behind a preview_ref, and
 * an answer's stream. The stream is read with fetch (an EventSource cannot send the key) by the
 * typed client's resuming SSE reader: a stream that drops before `done` is taken up again with
 * `Last-Event-ID` (the seq of the last chunk seen), so nothing is shown twice and nothing is
 * missed. What a chunk does to the exchange on screen is `applyChunk`.
 */
import {
  randomId,
  resumingChunks,
  SableApiError,
  type Answer,
  type ChatMessage,
  type ChatMessageList,
  type ChatSession,
  type ChatSessionEvents,
  type ChatSessionList,
  type Question,
  type StreamChunk,
  type TraceEvent,
} from '../../client/index.js';
import { problemOf, type Api, type Problem } from './api.js';

/** GET /intelligence/previews/{ref}: the passages a cited source showed (the service names no schema for it). */
export interface Preview {
  name: string | null;
  dataset_id: string;
  dataset_document_id: string | null;
  chunks: { chunk_id: string; text: string; metadata: Record<string, unknown> }[];
  download_path: string | null;
}

export type AnswerSource = Answer['sources'][number];

/** A cited source as the page shows it: the whole entry of a live answer, or the name a session kept. */
export type CitedSource = Pick<AnswerSource, 'name' | 'dataset_id' | 'dataset_document_id'> & Partial<AnswerSource>;

/** A step of a run's trace as the page shows it. */
export type TraceStep = Pick<TraceEvent, 'seq' | 'phase' | 'action' | 'status' | 'summary' | 'ms'>;

export interface Artifact {
  /** What it shows, in words. */
  content: string;
  columns: string[] | null;
  rows: unknown[][] | null;
}

/** One question and its answer, live or read back from a session. */
export interface Exchange {
  /** The run's id (a live one, or the one a stored message names), else the message's. */
  id: string;
  runId: string | null;
  question: string;
  answer: string;
  trace: TraceStep[];
  /** null until the citation chunk came. */
  sources: CitedSource[] | null;
  /** What the run produced beside the text (a computation's table). */
  artifacts: Artifact[];
  state: 'streaming' | 'resuming' | 'done' | 'failed' | 'stored';
  /** The run's end (done's status: succeeded, failed, cancelled...). */
  status: string | null;
  partial: boolean;
  /** How many times the stream dropped and was taken up again, and after which seq the last time. */
  drops: number;
  resumedAfter: number | null;
  problem: Problem | null;
}

/** Sessions the page lists (the service answers the most recently active first). */
const SESSIONS_LISTED = 50;
/** Messages of a session the page shows (the service's most). */
const MESSAGES_SHOWN = 200;
/** Trace events of a session read with it (the service's most). */
const EVENTS_SHOWN = 1000;
/** Drops in a row without a new chunk before the page gives up on a stream. */
const RESUMES = 6;

export function listSessions(api: Api): Promise<ChatSessionList> {
  return api.sable.call('GET', '/intelligence/sessions', { query: { limit: SESSIONS_LISTED } });
}

/** A session with its messages as exchanges, each with the trace of its run (the session's durable events). */
export async function openChat(api: Api, id: string): Promise<{ session: ChatSession; exchanges: Exchange[] }> {
  const [session, list, history] = await Promise.all([
    api.sable.call<ChatSession>('GET', `/intelligence/sessions/${enc(id)}`),
    api.sable.call<ChatMessageList>('GET', `/intelligence/sessions/${enc(id)}/messages`, { query: { limit: MESSAGES_SHOWN } }),
    api.sable.call<ChatSessionEvents>('GET', `/intelligence/sessions/${enc(id)}/events`, { query: { limit: EVENTS_SHOWN } }),
  ]);
  const traces = new Map<string, TraceStep[]>();
  for (const { run_id, seq, phase, action, status, summary, ms } of history.events) {
    const steps = traces.get(run_id) ?? traces.set(run_id, []).get(run_id)!;
    steps.push({ seq, phase, action, status, summary, ...(ms !== undefined ? { ms } : {}) });
  }
  return { session, exchanges: exchangesOf(list.messages).map((x) => (x.runId && traces.has(x.runId) ? { ...x, trace: traces.get(x.runId)! } : x)) };
}

/** A session for a new chat: its title is the first question, its metadata the datasets chosen. */
export function createSession(api: Api, title: string, datasetIds: string[]): Promise<ChatSession> {
  const short = title.length > 80 ? title.slice(0, 79) + '…' : title;
  return api.sable.call('POST', '/intelligence/sessions', { body: { title: short, metadata: { dataset_ids: datasetIds, started_in: 'dashboard' } } });
}

export function deleteSession(api: Api, id: string): Promise<void> {
  return api.sable.call('DELETE', `/intelligence/sessions/${enc(id)}`);
}

export function preview(api: Api, ref: string): Promise<Preview> {
  return api.sable.call('GET', `/intelligence/previews/${enc(ref)}`);
}

/**
 * The passages of the `n`th source of an exchange. A live answer's sources carry their
 * preview_ref; a session keeps only their names, so for an answer read back from a session the
 * run's chunks are read again for its citation (runs are kept 15 minutes after they end).
 */
export async function passagesOf(api: Api, apiKey: string, x: Exchange, n: number): Promise<Preview> {
  const source = x.sources?.[n - 1];
  let ref = source?.preview_ref;
  if (!ref && x.runId) {
    const ctrl = new AbortController();
    try {
      for await (const c of followRun(apiKey, x.runId, { signal: ctrl.signal, onDrop: () => undefined })) {
        if (c.chunk_type !== 'citation') continue;
        ref = (c.metadata.sources as CitedSource[] | undefined)?.[n - 1]?.preview_ref;
        break;
      }
    } catch (e) {
      if (!(e instanceof SableApiError && e.code === 'run_not_found')) throw e;
    } finally {
      ctrl.abort();
    }
  }
  if (!ref) throw new Error('The passages are no longer available: a session keeps its sources\' names only, and the run that cited them is kept 15 minutes.');
  return preview(api, ref);
}

export interface StreamHooks {
  signal: AbortSignal;
  /** The stream dropped (or its request failed) after the chunk of seq `after`; it is being taken up again. */
  onDrop: (after: number) => void;
}

/**
 * A question's answer as it streams. The run's id is chosen here, so a stream that drops, or a
 * request whose answer never came, is taken up by sending the question again with that run_id
 * and `Last-Event-ID` (the seq of the last chunk received): the service attaches to the run it
 * has (0: from the start) and sends what came after, or starts it if it never got it.
 */
export function askStream(apiKey: string, question: Omit<Question, 'stream' | 'run_id'> & { run_id: string }, hooks: StreamHooks): AsyncGenerator<StreamChunk> {
  return resuming(
    (after, again) => send(apiKey, 'POST', '/intelligence/query', { body: { ...question, stream: true }, headers: again ? { 'last-event-id': String(after) } : {}, signal: hooks.signal }),
    hooks,
  );
}

/** A run asked earlier (still running, or ended within the 15 minutes runs are kept), from its first chunk. */
export function followRun(apiKey: string, runId: string, hooks: StreamHooks): AsyncGenerator<StreamChunk> {
  return resuming(async (after, again) => {
    const res = await send(apiKey, 'GET', `/intelligence/runs/${enc(runId)}/events`, { headers: { accept: 'text/event-stream', ...(again ? { 'last-event-id': String(after) } : {}) }, signal: hooks.signal });
    // 204: the run has ended and sent everything after that seq.
    return res.status === 204 ? null : res;
  }, hooks);
}

/**
 * The chunks of a run until `done`, read by the typed client's resumingChunks; `open(after, again)`
 * opens the stream (again: after a drop, from the chunk after `after`; null: nothing is left). A
 * refusal of the service is thrown; a connection that fails or ends before `done` is opened again
 * (backing off), also when it failed to open, until RESUMES tries in a row bring nothing new. Each
 * chunk comes once, in order.
 */
function resuming(open: (after: number, again: boolean) => Promise<Response | null>, hooks: StreamHooks): AsyncGenerator<StreamChunk> {
  return resumingChunks(
    () => open(0, false),
    (after) => open(after, true),
    RESUMES,
    { signal: hooks.signal, onDrop: hooks.onDrop, reopenAfter: (e) => !(e instanceof SableApiError) },
  );
}

/** One request with the key whose answer is read as a stream; a refusal is thrown as the client throws it. */
async function send(apiKey: string, method: string, path: string, o: { body?: unknown; headers?: Record<string, string>; signal: AbortSignal }): Promise<Response> {
  const requestId = randomId();
  const headers: Record<string, string> = { 'x-api-key': apiKey, 'x-request-id': requestId, ...o.headers };
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(new URL(path, location.origin), { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body), signal: o.signal });
  if (res.ok) return res;
  let body: { error: string; message: string };
  try {
    body = await res.json();
  } catch {
    body = { error: `http_${res.status}`, message: res.statusText };
  }
  throw new SableApiError(res.status, body.error, body.message, res.headers.get('x-request-id') ?? requestId, body);
}

export function newExchange(runId: string, question: string): Exchange {
  return { id: runId, runId, question, answer: '', trace: [], sources: null, artifacts: [], state: 'streaming', status: null, partial: false, drops: 0, resumedAfter: null, problem: null };
}

/** What one chunk of the stream does to the exchange. */
export function applyChunk(x: Exchange, c: StreamChunk): Exchange {
  const m = c.metadata;
  const state = x.state === 'resuming' ? 'streaming' : x.state;
  switch (c.chunk_type) {
    case 'event':
      return { ...x, state, trace: [...x.trace, { seq: c.seq, phase: String(m.phase), action: String(m.action), status: String(m.status), summary: c.content, ...(typeof m.ms === 'number' ? { ms: m.ms } : {}) }] };
    case 'text':
      return { ...x, state, answer: x.answer + c.content };
    case 'citation':
      return { ...x, state, sources: (m.sources as CitedSource[] | undefined) ?? [] };
    case 'artifact':
      return { ...x, state, artifacts: [...x.artifacts, { content: c.content, columns: Array.isArray(m.columns) ? m.columns.map(String) : null, rows: Array.isArray(m.rows) ? (m.rows as unknown[][]) : null }] };
    case 'metadata':
      return { ...x, state, partial: m.partial === true };
    case 'error':
      return { ...x, state, problem: { message: c.content, code: typeof m.code === 'string' ? m.code : null, requestId: null } };
    case 'done':
      return { ...x, state: m.status === 'succeeded' ? 'done' : 'failed', status: String(m.status), partial: x.partial || m.partial === true };
    default:
      return { ...x, state };
  }
}

export function dropped(x: Exchange, after: number): Exchange {
  return { ...x, state: 'resuming', drops: x.drops + 1, resumedAfter: after };
}

export function failed(x: Exchange, e: unknown): Exchange {
  return { ...x, state: 'failed', problem: problemOf(e) };
}

/**
 * A session's messages as exchanges: a question and the answer that names the same run. The
 * session keeps the sources' names, not their previews.
 */
export function exchangesOf(messages: ChatMessage[]): Exchange[] {
  const out: Exchange[] = [];
  for (const m of messages) {
    const runId = typeof m.metadata.run_id === 'string' ? m.metadata.run_id : null;
    if (m.role === 'user') {
      out.push({ ...newExchange(runId ?? m.id, m.content), runId, state: 'stored' });
    } else if (m.role === 'assistant') {
      const sources = Array.isArray(m.metadata.sources) ? (m.metadata.sources as CitedSource[]) : [];
      const last = out.at(-1);
      const answered = { answer: m.content, sources, partial: m.metadata.partial === true, status: 'succeeded' };
      if (last && last.answer === '' && (runId === null || last.runId === runId)) Object.assign(last, answered);
      else out.push({ ...newExchange(runId ?? m.id, ''), runId, state: 'stored', ...answered });
    }
  }
  return out;
}

const enc = encodeURIComponent;
