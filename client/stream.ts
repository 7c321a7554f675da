/**
 * Server-Sent Events read from a fetch body, and an answer's stream that outlives a dropped
 * connection: each chunk's seq is its `id:`, so after a drop the client asks the run for what
 * came after the last one it saw (204: the run had ended and nothing is left).
 */
import type { StreamChunk } from './types.js';

export interface SseFrame {
  id: number | null;
  data: string;
}

/** The frames of an event stream as they arrive (comment lines skipped). */
export async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: number | null = null;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = Number(line.slice(3).trim());
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) yield { id, data: data.join('\n') };
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** What a caller that follows a stream more closely adds to resumingChunks (all optional). */
export interface Resumption {
  /** Stops the stream: a failure once it is aborted is thrown, and no drop is taken up after it. */
  signal?: AbortSignal;
  /** Called before the stream is opened again after a drop, with the seq of the last chunk seen. */
  onDrop?: (after: number) => void;
  /**
   * Whether a failure to open the stream (`first` or `resume` rejecting) is a drop to take up
   * again, as one that fails while it is read is; without it such a failure is thrown.
   */
  reopenAfter?: (failure: unknown) => boolean;
}

/**
 * The chunks of a run until `done`. `first` opens the stream; `resume(after)` opens it again
 * after a drop (either answering null: nothing is left). Gives up after `attempts` drops in a row
 * without a chunk.
 */
export async function* resumingChunks(
  first: () => Promise<Response | null>,
  resume: (after: number) => Promise<Response | null>,
  attempts: number,
  o: Resumption = {},
): AsyncGenerator<StreamChunk> {
  let last = 0;
  let failures = 0;
  for (let again = false; ; again = true) {
    if (again) o.onDrop?.(last);
    let progressed = false;
    let dropped: unknown;
    let res: Response | null | undefined;
    try {
      res = again ? await resume(last) : await first();
    } catch (e) {
      if (o.signal?.aborted || !o.reopenAfter?.(e)) throw e;
      dropped = e;
    }
    if (res === null) return;
    if (res) {
      try {
        for await (const frame of sseFrames(res.body!)) {
          const chunk = { ...(JSON.parse(frame.data) as Omit<StreamChunk, 'seq'>), seq: frame.id ?? last + 1 };
          if (chunk.seq <= last) continue;
          last = chunk.seq;
          progressed = true;
          yield chunk;
          if (chunk.chunk_type === 'done') return;
        }
      } catch (e) {
        if (o.signal?.aborted) throw e;
        dropped = e;
      }
    }
    // The stream ended or dropped before `done`: pick up after the last chunk seen.
    failures = progressed ? 1 : failures + 1;
    if (failures > attempts) throw dropped ?? new Error(`the answer's stream ended ${failures} times in a row without a new chunk`);
    await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** failures)));
    if (o.signal?.aborted) return;
  }
}
