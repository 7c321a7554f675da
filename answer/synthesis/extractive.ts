/**
 * The answerer that needs no model: the sentences of the retrieved chunks that best answer the
 * question, each cited. A sentence scores by the question's terms it holds (rarer terms among
 * the candidates weigh more), a little by its source's rank, and a little less when long; the
 * best few are kept in reading order (source by source, as they stand in the chunk).
 */
import { tokenize } from '../../engine/index.js';
import { sentencesOf } from './sentences.js';

export interface ExtractiveSource {
  texts: string[];
}

export interface PickedSentence {
  text: string;
  /** 1-based source number, the `[n]` of the sentence. */
  source: number;
  score: number;
}

const MAX_SENTENCES = 3;
const MAX_CHARS = 700;
const MIN_WORDS = 3;

interface Candidate extends PickedSentence {
  terms: Set<string>;
  order: number;
}

export function pickSentences(question: string, sources: ExtractiveSource[]): PickedSentence[] {
  const asked = new Set(tokenize(question));
  const candidates: Candidate[] = [];
  let order = 0;
  sources.forEach((s, i) => {
    for (const text of s.texts) {
      sentencesOf(text).forEach((sentence, position) => {
        const words = sentence.split(' ').length;
        // A bracketed number in the text itself (a footnote) would read as a citation marker.
        if (words < MIN_WORDS || sentence.length > MAX_CHARS || /\[\d+\]/.test(sentence)) return;
        const terms = new Set(tokenize(sentence));
        candidates.push({ text: sentence, source: i + 1, score: position === 0 ? 0.05 : 0, terms, order: order++ });
      });
    }
  });
  if (candidates.length === 0) return [];
  const df = new Map<string, number>();
  for (const c of candidates) for (const t of c.terms) if (asked.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
  for (const c of candidates) {
    let overlap = 0;
    for (const t of c.terms) if (asked.has(t)) overlap += Math.log(1 + candidates.length / df.get(t)!);
    const length = Math.max(0, c.terms.size - 25);
    c.score += overlap / (1 + 0.02 * length) + 0.3 / c.source;
  }
  const ranked = [...candidates].sort((a, b) => b.score - a.score || a.order - b.order);
  const best = ranked[0].score;
  const chosen: Candidate[] = [];
  let chars = 0;
  for (const c of ranked) {
    if (chosen.length === MAX_SENTENCES || c.score < best * 0.5) break;
    if (chosen.some((x) => jaccard(x.terms, c.terms) > 0.8)) continue;
    if (chars + c.text.length > MAX_CHARS && chosen.length > 0) continue;
    chosen.push(c);
    chars += c.text.length;
  }
  return chosen.sort((a, b) => a.order - b.order).map(({ text, source, score }) => ({ text, source, score: Math.round(score * 1000) / 1000 }));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let both = 0;
  for (const t of a) if (b.has(t)) both++;
  const union = a.size + b.size - both;
  return union === 0 ? 1 : both / union;
}
