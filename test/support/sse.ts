// Reads a Server-Sent Events answer frame by frame: `id:` and `data:` lines up to a blank line
// (comment lines skipped), the data parsed as JSON. `stopAfter` stops reading (and drops the
// connection) after that many frames, as a client whose network went away.
export interface Frame {
  id: number | null;
  chunk_type: string;
  content: string;
  metadata: Record<string, any>;
}

export async function readFrames(res: Response, opts: { stopAfter?: number; abort?: AbortController; onFrame?: (f: Frame) => void } = {}): Promise<Frame[]> {
  const frames: Frame[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = res.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: number | null = null;
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = Number(line.slice(4));
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (!data) continue;
      frames.push({ id, ...JSON.parse(data) });
      opts.onFrame?.(frames[frames.length - 1]);
      if (opts.stopAfter !== undefined && frames.length >= opts.stopAfter) {
        opts.abort?.abort();
        await reader.cancel().catch(() => undefined);
        return frames;
      }
    }
  }
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
