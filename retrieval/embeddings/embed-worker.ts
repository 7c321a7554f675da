/**
 * Runs on an embedding pool thread: tokenizes the texts and runs the native model on them. The
 * weights live once in process memory (loaded by the pool's owner); each thread attaches to them
 * by handle with its own tokenizer, so tokenizing a large batch never holds the HTTP thread.
 */
import { LocalEmbeddingModel, lowerThisThreadPriority } from '../../engine/index.js';

export interface EmbedTask {
  handle: number;
  dir: string;
  threads: number;
  texts: string[];
  /** Documents (ingestion, inserts with text): computed at background priority. */
  background: boolean;
}

const attached = new Map<number, LocalEmbeddingModel>();
let lowered = false;

export default async function embed(task: EmbedTask): Promise<Float32Array> {
  // The documents' pool: its tokenizing is background work too (embed-pool.ts).
  if (task.background && !lowered) {
    lowerThisThreadPriority();
    lowered = true;
  }
  let model = attached.get(task.handle);
  if (!model) attached.set(task.handle, (model = LocalEmbeddingModel.attach(task.handle, { dir: task.dir, threads: task.threads })));
  const vectors = await model.embed(task.texts, undefined, { background: task.background });
  const flat = new Float32Array(vectors.length * model.dim);
  vectors.forEach((v, i) => flat.set(v, i * model.dim));
  return flat;
}
