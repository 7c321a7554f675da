/**
 * The default reranker: BM25 over the candidate set itself (the documents sent are the corpus, so
 * IDF reflects what is rare among these hits). Purely lexical, no model weights; it helps when
 * the query's words matter more than the embedding's neighbourhood, and it never leaves the process.
 */
import { bm25Idf, bm25TermScore, tokenize } from '../../engine/index.js';
import type { RerankProvider } from './types.js';

export const LOCAL_MODEL = 'bm25-lexical';

export class LocalRerankProvider implements RerankProvider {
  readonly name = 'local';
  readonly defaultModel = LOCAL_MODEL;
  readonly models = [LOCAL_MODEL] as const;

  async rerank(query: string, documents: string[], topN: number, _model: string, signal: AbortSignal): Promise<{ index: number; score: number }[]> {
    signal.throwIfAborted();
    const terms = [...new Set(tokenize(query))];
    const docs = documents.map((d) => (d ? tokenize(d) : []));
    const n = docs.length;
    const avgLen = docs.reduce((s, d) => s + d.length, 0) / Math.max(n, 1) || 1;

    const wanted = new Set(terms);
    const tfs = docs.map((d) => {
      const tf = new Map<string, number>();
      for (const t of d) if (wanted.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
      return tf;
    });
    const idf = new Map<string, number>();
    for (const t of terms) idf.set(t, bm25Idf(n, tfs.reduce((c, tf) => c + (tf.has(t) ? 1 : 0), 0)));
    const scored = docs.map((d, index) => {
      let score = 0;
      for (const [t, f] of tfs[index]) score += bm25TermScore(idf.get(t)!, f, d.length, avgLen);
      return { index, score };
    });
    return scored.sort((a, b) => b.score - a.score || a.index - b.index).slice(0, Math.max(0, topN));
  }
}
