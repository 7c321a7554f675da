/**
 * Citations checked before they are sent: every `[n]` must point at an existing source (1-based)
 * and the sentence it ends must be found in that source's chunks: verbatim for the extractive
 * answerer, mostly (its content words) for a model's paraphrase. Markers that do not hold are
 * dropped, and the trace says which.
 */
import { tokenize } from '../../engine/index.js';
import { normalize } from './sentences.js';

const MARKER = /\s?\[(\d+)\]/g;
/** Share of a paraphrased sentence's terms that must be in the cited chunks. */
export const SUPPORT_SHARE = 0.6;

export interface CitedSource {
  texts: string[];
}

export interface Dropped {
  marker: number;
  sentence: string;
  reason: 'no_such_source' | 'not_in_source';
}

export interface CheckedSentence {
  text: string;
  kept: number[];
  dropped: Dropped[];
}

/** One sentence with its markers: the markers that hold are kept, the others removed. */
export function checkSentence(sentence: string, sources: CitedSource[], verbatim: boolean): CheckedSentence {
  const claim = normalize(sentence.replace(MARKER, ''));
  const kept: number[] = [];
  const dropped: Dropped[] = [];
  const text = sentence.replace(MARKER, (whole, digits: string) => {
    const n = Number(digits);
    const source = sources[n - 1];
    if (!source) {
      dropped.push({ marker: n, sentence: claim, reason: 'no_such_source' });
      return '';
    }
    if (!supports(source, claim, verbatim)) {
      dropped.push({ marker: n, sentence: claim, reason: 'not_in_source' });
      return '';
    }
    kept.push(n);
    return whole;
  });
  return { text, kept, dropped };
}

function supports(source: CitedSource, claim: string, verbatim: boolean): boolean {
  const bare = claim.replace(/[\s.!?]+$/, '');
  if (bare === '') return false;
  if (source.texts.some((t) => normalize(t).includes(bare))) return true;
  if (verbatim) return false;
  const terms = new Set(tokenize(claim));
  if (terms.size === 0) return false;
  const have = new Set(source.texts.flatMap((t) => tokenize(t)));
  let found = 0;
  for (const t of terms) if (have.has(t)) found++;
  return found / terms.size >= SUPPORT_SHARE;
}
