/**
 * Server-Sent Events: each chunk is `id: <seq>` and `data: <JSON>` then a blank line, so a
 * browser's EventSource sends `Last-Event-ID` on reconnect and a client can resume where it
 * stopped. A comment line every few seconds keeps proxies from closing a quiet stream.
 */
import { PassThrough, type Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { badRequest } from '../../errors/codes.js';
import type { Request } from './types.js';

export const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };
const KEEP_ALIVE_MS = 15_000;

export interface SseChunk {
  seq: number;
  chunk_type: string;
  content: string;
  metadata: Record<string, unknown>;
}

/** Something that replays its chunks after a seq and sends new ones until its last. */
export interface ChunkSource {
  attach(after: number, listener: (c: SseChunk) => void): () => void;
  /** False once the last chunk was sent: nothing new will come. */
  readonly running: boolean;
}

export function frame(c: SseChunk): string {
  return `id: ${c.seq}\ndata: ${JSON.stringify({ chunk_type: c.chunk_type, content: c.content, metadata: c.metadata })}\n\n`;
}

/** The stream of chunks after `after`, ending after `done`; closing it detaches. */
export function sseStream(source: ChunkSource, after: number): Readable {
  const out = new PassThrough();
  let ended = false;
  const detach = source.attach(after, (c) => {
    if (ended) return;
    out.write(frame(c));
    if (c.chunk_type === 'done') {
      ended = true;
      out.end();
    }
  });
  // Resumed after the last chunk of a run that ended (after=, Last-Event-ID): nothing is left to
  // send, and waiting for a `done` already sent kept the stream open for ever.
  if (!ended && !source.running) {
    ended = true;
    out.end();
  }
  const keepAlive = setInterval(() => out.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  keepAlive.unref();
  out.once('close', () => {
    clearInterval(keepAlive);
    detach();
  });
  out.once('finish', () => clearInterval(keepAlive));
  return out;
}

const Seq = (description: string) => Type.Optional(Type.Integer({ minimum: 0, description }));

/** The header an EventSource sends when it reconnects. */
export const ResumeHeaders = Type.Object({ 'Last-Event-ID': Seq('the seq (id:) of the last chunk received: the stream resumes after it') });
/** The same, in the query, for clients that cannot set headers. */
export const AfterQuery = Type.Object({ after: Seq('a seq: only what comes after it (default 0, everything)') });

/** The seq to resume after: `Last-Event-ID` (an EventSource reconnecting), else the `after` query. */
export function resumeAfter(req: Request): number {
  const raw = req.headers['last-event-id'] ?? req.query.get('after');
  if (raw === undefined || raw === null || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw badRequest('after (or Last-Event-ID) must be a non-negative integer: the seq of the last chunk received');
  return n;
}

export function wantsEventStream(req: Request): boolean {
  return (req.headers.accept ?? '').includes('text/event-stream');
}
