// Reads a Server-Sent Events answer frame by frame, as the typed client does (its `sseFrames`),
// the data parsed as JSON. `stopAfter` stops reading (and drops the
// connection) after that many frames, as a client whose network went away.
import { sseFrames } from '../client/stream.js';

export interface Frame {
  id: number | null;
  chunk_type: string;
  content: string;
  metadata: Record<string, any>;
}

export async function readFrames(res: Response, opts: { stopAfter?: number; abort?: AbortController; onFrame?: (f: Frame) => void } = {}): Promise<Frame[]> {
  const frames: Frame[] = [];
  for await (const { id, data } of sseFrames(res.body!)) {
    frames.push({ id, ...JSON.parse(data) });
    opts.onFrame?.(frames[frames.length - 1]);
    if (opts.stopAfter !== undefined && frames.length >= opts.stopAfter) {
      opts.abort?.abort();
      break;
    }
  }
  // Stopped early: the connection goes, as a client's whose network went away.
  await res.body!.cancel().catch(() => undefined);
  return frames;
}

/** The stream rules every run keeps: seq = id, monotonic; events' content is their summary; citation before done; done last, once. */
export function streamProblems(frames: Frame[]): string[] {
  const problems: string[] = [];
  frames.forEach((f, i) => {
    if (i > 0 && f.id !== null && frames[i - 1].id !== null && f.id! <= frames[i - 1].id!) problems.push(`id ${f.id} after ${frames[i - 1].id}`);
    if (f.chunk_type === 'event') {
      if (f.metadata.seq !== f.id) problems.push(`event seq ${f.metadata.seq} is not its id ${f.id}`);
      if (f.content !== f.metadata.summary) problems.push(`event ${f.metadata.action}: content is not the summary`);
      for (const k of ['run_id', 'phase', 'action', 'status']) if (f.metadata[k] === undefined) problems.push(`event ${f.metadata.action} lacks ${k}`);
    }
  });
  const dones = frames.filter((f) => f.chunk_type === 'done');
  if (dones.length !== 1) problems.push(`${dones.length} done chunks`);
  if (frames.at(-1)?.chunk_type !== 'done') problems.push('done is not last');
  const citation = frames.findIndex((f) => f.chunk_type === 'citation');
  if (citation < 0 || citation > frames.findIndex((f) => f.chunk_type === 'done')) problems.push('no citation before done');
  return problems;
}
