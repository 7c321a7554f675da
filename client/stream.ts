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

/**
 * The chunks of a run until `done`. `first` opens the stream; `resume(after)` opens it again
 * after a drop (null: nothing is left). Gives up after `attempts` drops in a row without a chunk.
 */
export async function* resumingChunks(first: () => Promise<Response>, resume: (after: number) => Promise<Response | null>, attempts: number): AsyncGenerator<StreamChunk> {
  let last = 0;
  let failures = 0;
  let res: Response | null = await first();
  while (res !== null) {
    let progressed = false;
    let dropped: unknown;
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
      dropped = e;
    }
    // The stream ended or dropped before `done`: pick up after the last chunk seen.
    failures = progressed ? 1 : failures + 1;
    if (failures > attempts) throw dropped ?? new Error(`the answer's stream ended ${failures} times in a row without a new chunk`);
    await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** failures)));
    res = await resume(last);
  }
}
