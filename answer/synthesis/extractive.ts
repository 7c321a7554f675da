/**
 * The answerer that needs no model: a short contiguous passage of the passage that best answers
 * the question, each sentence cited.
 *
 * - Candidates are the sentences of the retrieved chunks, less what is never an answer: a
 *   heading (context, not answer), a restatement of the question, boilerplate (license grants,
 *   copyright lines, navigation text that got through).
 * - The answering chunk is the search's first (hybrid: meaning and words), unless a chunk lower
 *   down sits under a heading that holds most of the question's terms and the first does not.
 * - In that chunk the passage starts where the answer is: at a section's start, its first
 *   sentence (a FAQ's "Yes." holds no question term); elsewhere, the sentence that holds most of
 *   the question's weight (rarer terms weigh more, with BM25's saturation). It runs on with the
 *   sentences that follow, up to a length bound; another source adds one sentence only when it
 *   holds question terms the passage lacks.
 * - When the nearest chunk is far from the question and holds little of it, there is no answer:
 *   the caller says so and shows the closest sources, rather than quoting unrelated text.
 */
import { tokenize } from '../../engine/index.js';
import { normalize, sentencesOf } from './sentences.js';

export interface ExtractiveChunk {
  /** The chunk's text less the headings it opens with (`openingHeadingsCut`). */
  text: string;
  /** The headings above the chunk, outermost first (context: never an answer themselves). */
  headings: string[];
  /** The search's similarity of the chunk to the question, 0-1 (cosine where the metric has one). */
  relevance: number;
  /** The chunk starts a section (its document's first chunk, or its text opened with its heading). */
  startsSection: boolean;
  /** Its place in the search's order, 0 first. */
  rank: number;
}

export interface ExtractiveSource {
  chunks: ExtractiveChunk[];
}

export interface PickedSentence {
  text: string;
  /** 1-based source number, the `[n]` of the sentence. */
  source: number;
  score: number;
}

export interface AnswerBounds {
  /** Sentences in the answer. */
  maxSentences: number;
  /** Words in the answer (the first sentence is kept whole however long). */
  maxWords: number;
}

export const DEFAULT_BOUNDS: AnswerBounds = { maxSentences: 3, maxWords: 80 };

/**
 * No answer when the nearest chunk's relevance is below MIN_RELEVANCE and none of its sentences
 * holds MIN_COVERAGE of the question's weight (bench:qa: answerable FAQ questions against
 * questions no document answers).
 */
export const MIN_RELEVANCE = 0.45;
export const MIN_COVERAGE = 0.5;

const MAX_CHARS = 700;
const MIN_WORDS = 1;
const K1 = 1.2;

/** Text that is never an answer, wherever it stands. */
const BOILERPLATE = [
  /permission is hereby granted/i,
  /\bTHE SOFTWARE IS PROVIDED\b/i,
  /without warranty of any kind/i,
  /licensed under the\b.*\blicense\b/i,
  /\bgnu (general|lesser) public license\b/i,
  /redistribution and use in source and binary forms/i,
  /^(©|\(c\)|copyright\b)/i,
  /\ball rights reserved\b/i,
  /^(previous|next)( topic| page| chapter)?\b/i,
  /^(skip to|jump to|table of contents|on this page|edit this page|back to top)\b/i,
  /^created using sphinx\b/i,
];

interface Candidate {
  text: string;
  source: number;
  chunk: number;
  /** Index among the chunk's candidate sentences. */
  position: number;
  words: number;
  terms: string[];
  set: Set<string>;
}

interface Scored {
  chunk: number;
  source: number;
  score: number;
}

export function pickSentences(question: string, sources: ExtractiveSource[], bounds: AnswerBounds = DEFAULT_BOUNDS): PickedSentence[] {
  const asked = [...new Set(tokenize(question))];
  const askedSet = new Set(asked);
  const chunks = sources.flatMap((s, i) => s.chunks.map((c) => ({ ...c, source: i + 1 })));
  const candidates = candidatesOf(question, askedSet, chunks);
  if (candidates.length === 0) return [];

  // Rarer question terms weigh more; a term every candidate has weighs little.
  const df = new Map<string, number>();
  for (const c of candidates) for (const t of c.set) if (askedSet.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
  const n = candidates.length;
  const idf = new Map(asked.map((t) => [t, Math.log(1 + (n - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5))]));
  const weight = asked.reduce((s, t) => s + idf.get(t)!, 0) || 1;
  const held = (terms: Iterable<string>) => {
    let w = 0;
    for (const t of new Set(terms)) if (askedSet.has(t)) w += idf.get(t)!;
    return w / weight;
  };
  const avgLength = candidates.reduce((s, c) => s + c.terms.length, 0) / n;
  const lexical = (c: Candidate) => {
    let score = 0;
    const tf = new Map<string, number>();
    for (const t of c.terms) if (askedSet.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, f] of tf) score += idf.get(t)! * ((f * (K1 + 1)) / (f + K1 * (0.25 + 0.75 * (c.terms.length / avgLength))));
    return score / weight;
  };

  // The answering chunk.
  const byChunk = new Map<number, Candidate[]>();
  for (const c of candidates) (byChunk.get(c.chunk) ?? byChunk.set(c.chunk, []).get(c.chunk)!).push(c);
  const headingHolds = (i: number) => {
    const h = chunks[i].headings.at(-1);
    return h === undefined ? 0 : held(tokenize(h));
  };
  let best: Scored | undefined;
  for (const i of byChunk.keys()) {
    const score = 1 / (1 + chunks[i].rank) + (headingHolds(i) >= 0.8 ? 1 : 0);
    if (!best || score > best.score) best = { chunk: i, source: chunks[i].source, score };
  }
  if (!best) return [];
  const answering = chunks[best.chunk];
  const sentences = byChunk.get(best.chunk)!;
  const coverage = Math.max(...[...byChunk.values()].flat().map((c) => held(c.set)), headingHolds(best.chunk));
  if (answering.relevance < MIN_RELEVANCE && coverage < MIN_COVERAGE) return [];

  // Where the answer starts in it: a section's first sentence, else the best-matching sentence.
  const scores = new Map(candidates.map((c) => [c, lexical(c)]));
  const start = answering.startsSection ? sentences[0] : sentences.reduce((a, c) => (scores.get(c)! > scores.get(a)! ? c : a), sentences[0]);
  const passage = [start];
  let words = start.words;
  for (const c of sentences) {
    if (c.position <= start.position) continue;
    if (passage.length >= bounds.maxSentences || words + c.words > bounds.maxWords) break;
    passage.push(c);
    words += c.words;
  }
  // Another source's sentence, only for question terms the passage lacks.
  const covered = new Set(passage.flatMap((c) => c.terms.filter((t) => askedSet.has(t))));
  const extra = candidates
    .filter((c) => c.source !== best!.source && c.terms.some((t) => askedSet.has(t) && !covered.has(t)) && scores.get(c)! >= Math.max(0.5, scores.get(start)!))
    .sort((a, b) => scores.get(b)! - scores.get(a)!)[0];
  if (extra && passage.length < bounds.maxSentences && words + extra.words <= bounds.maxWords) passage.push(extra);
  return passage.map((c) => ({ text: c.text, source: c.source, score: Math.round(scores.get(c)! * 1000) / 1000 }));
}

/**
 * A chunk's text less the headings it opens with: a section's title is context, and split into
 * sentences it leaves pieces that are not headings alone ("3.1.5." of "3.1.5. Why? How?").
 */
export function openingHeadingsCut(text: string, headings: string[]): { text: string; opensSection: boolean } {
  let rest = text.trimStart();
  let opensSection = false;
  for (let cut = true; cut; ) {
    cut = false;
    for (const [i, h] of headings.entries()) {
      const heading = h.trim();
      if (heading === '' || !rest.startsWith(heading)) continue;
      rest = rest.slice(heading.length).trimStart();
      cut = true;
      if (i === headings.length - 1) opensSection = true;
    }
  }
  return { text: rest, opensSection };
}

/** The sentences that may answer: not headings, restatements of the question, or boilerplate. */
function candidatesOf(question: string, asked: Set<string>, chunks: (ExtractiveChunk & { source: number })[]): Candidate[] {
  const out: Candidate[] = [];
  const bareQuestion = bare(question);
  chunks.forEach((chunk, i) => {
    const headings = new Set(chunk.headings.map(bare));
    let position = 0;
    for (const sentence of sentencesOf(chunk.text)) {
      const words = sentence.split(' ').length;
      // A bracketed number in the text itself (a footnote) would read as a citation marker.
      // A sentence without a letter ("3.1.5.", a rule of dashes) says nothing.
      if (words < MIN_WORDS || sentence.length > MAX_CHARS || /\[\d+\]/.test(sentence) || !/\p{L}/u.test(sentence)) continue;
      const b = bare(sentence);
      if (headings.has(b) || b === bareQuestion || BOILERPLATE.some((re) => re.test(sentence))) continue;
      const terms = tokenize(sentence);
      const set = new Set(terms);
      if (isRestatement(sentence, set, asked)) continue;
      out.push({ text: sentence, source: chunk.source, chunk: i, position: position++, words, terms, set });
    }
  });
  return out;
}

/** A question that asks what the question asks (a FAQ's heading kept in its text). */
function isRestatement(sentence: string, terms: Set<string>, asked: Set<string>): boolean {
  if (!sentence.trimEnd().endsWith('?')) return false;
  let both = 0;
  for (const t of terms) if (asked.has(t)) both++;
  return both >= Math.max(1, 0.6 * Math.min(terms.size, asked.size));
}

/** A sentence or heading compared by its words: case, punctuation and permalink glyphs aside. */
function bare(text: string): string {
  return normalize(text).toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}
