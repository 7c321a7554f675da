// `npm run bench:qa`: question answering through the running service, on real documentation:
//   - the Debian FAQ as Debian publishes it (HTML chapters), and as bench:retrieval has it (each
//     section a text file without its heading: the question's words are nowhere but in the body);
//   - Celery's FAQ page among nine other pages of its documentation (Sphinx HTML).
// Every file goes through a file_upload source (parsed, chunked, embedded, indexed by the
// ingestion job); every heading that is a question is asked of POST /intelligence/query (default
// mode, top_k 5) and the section it heads is the gold passage (bench/qa/corpora.ts reads it from
// the documents with cheerio). Measured per corpus:
//   - recall@1 / @5 of the passages the answer came from (the gold section first / among five);
//   - answers holding the gold section's key sentence (its first sentence);
//   - answers whose first sentence is the question or a heading, answers quoting a licence or
//     navigation text (target 0 for both);
//   - 20 questions of another FAQ that no file answers: the share answered "no answer found"
//     with the closest sources;
//   - [n] markers whose sentence is in a chunk of source n (target 100 %);
//   - time to the first chunk and to `done` over SSE (p50, p99);
//   - peers: the search route on the same chunks (dense, hybrid, hybrid with the local reranker).
//
//   --out=DIR      where the report goes (default bench/results)
//   --limit=N      ask the first N questions of each corpus only
//   --corpus=a,b   only these corpora (debian-html, debian-sections, celery)
//   --no-install   do not apt-get the Debian FAQ when it is missing
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { sentencesOf, normalize } from '../../answer/synthesis/sentences.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { percentiles } from '../http/stats.js';
import { readFrames } from '../../testkit/sse.js';
import { callerOf, serve, type Served } from '../service.js';
import { celeryHtml, debianHtml, debianSections, type QaCorpus, type QaQuestion } from './corpora.js';

const args = new Map(process.argv.slice(2).map((a) => (a.includes('=') ? [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a.slice(2), 'true'])));
const log = (m: string) => process.stderr.write(`[qa] ${m}\n`);

const CORPORA: Record<string, () => QaCorpus> = {
  'debian-html': () => debianHtml(!args.has('no-install')),
  'debian-sections': () => debianSections(!args.has('no-install')),
  celery: () => celeryHtml(),
};

/** The extractive answerer's words when nothing answers (answer/synthesis/write-answer.ts). */
const NO_ANSWER = /^I found nothing in the datasets in scope that answers this question/;

/**
 * What is never an answer, read by this bench on its own (not the answerer's list): licence
 * grants and copyright lines, and the navigation text of documentation themes.
 */
const BOILERPLATE = [
  /permission is hereby granted/i,
  /permission is granted to (copy|make|distribute)/i,
  /provided (by the copyright holders )?["“]?as is/i,
  /without (any )?warranty/i,
  /all rights reserved/i,
  /^(copyright|©|\(c\))\s/i,
  /redistribution and use in source and binary forms/i,
  /\bgnu (general|lesser|free documentation) (public )?license\b/i,
  /^(previous|next) (topic|page|chapter)\b/i,
  /\b(table of contents|quick search|show source|edit on github|back to top|created using sphinx)\b/i,
];

interface Chunk {
  text: string;
  source: string;
  metadata: { heading?: string; name?: string };
}

interface Asked {
  question: string;
  answer: string;
  key: string;
  keyHeld: boolean;
  rank: number;
  noAnswer: boolean;
  headingFirst: boolean;
  boilerplate: string | null;
  relevance: number;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;


/** Passages in rank order: a passage is a document, or a section of one when the gold names sections. */
function passageRank(chunks: Chunk[], gold: QaQuestion['gold']): number {
  const seen = new Set<string>();
  for (const c of chunks) {
    const heading = gold.heading === undefined ? '' : (c.metadata.heading ?? '').split(' > ').at(-1) ?? '';
    const key = `${c.metadata.name ?? c.source}\u0000${heading}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if ((c.metadata.name ?? c.source) === gold.file && (gold.heading === undefined || plain(heading) === plain(gold.heading))) return seen.size;
  }
  return Infinity;
}

/** Text compared as words: whitespace and the permalink glyphs some parsers keep aside. */
const plain = (s: string) => normalize(s.replace(/[¶§🔗]/gu, '')).toLowerCase();

/** A sentence that is a heading, or a piece of one ("3.1.1." and "Why?" of "3.1.1. Why?"), or the question. */
function isHeading(sentence: string, headings: string[]): boolean {
  const piece = plain(sentence);
  return headings.some((h) => plain(h).includes(piece));
}

async function ingest(s: Served, corpus: QaCorpus): Promise<{ datasetId: string; chunks: number }> {
  const call = callerOf(s);
  const ds = await call('POST', '/datasets', { name: corpus.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase() });
  await call('POST', `/datasets/${ds.id}/ensure-engine`);
  const src = await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: ds.name, config: {} });
  const init = await call('POST', `/ingestion/sources/${src.id}/upload/init`, { dataset_id: ds.id, files: corpus.files.map((f) => ({ name: f.name, size_bytes: f.bytes.byteLength, content_type: f.contentType })) });
  for (const [i, u] of init.uploads.entries()) {
    const put = await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': corpus.files[i].contentType }, body: new Uint8Array(corpus.files[i].bytes) });
    if (put.status !== 200) throw new Error(`PUT ${corpus.files[i].name}: ${put.status}`);
  }
  await call('POST', `/ingestion/sources/${src.id}/upload/complete`, { job_id: init.job_id, file_ids: init.uploads.map((u: { file_id: string }) => u.file_id) });
  let job;
  while ((job = await call('GET', `/ingestion/jobs/${init.job_id}`)).status !== 'completed') {
    if (job.status === 'failed') throw new Error(`ingestion failed: ${job.message}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const stats = await call('GET', `/datasets/${ds.id}/stats`);
  return { datasetId: ds.id, chunks: stats.vector_count };
}

/** Time to the first SSE frame and to the end of the stream. */
async function timed(s: Served, body: object): Promise<{ firstMs: number; doneMs: number }> {
  const t0 = performance.now();
  const res = await fetch(s.url + '/intelligence/query', { method: 'POST', headers: { 'x-api-key': s.key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`query: ${res.status} ${await res.text()}`);
  let firstMs = NaN;
  await readFrames(res, { onFrame: () => (firstMs = Number.isNaN(firstMs) ? performance.now() - t0 : firstMs) });
  return { firstMs, doneMs: performance.now() - t0 };
}

/**
 * Question-to-passage scoring with the local model over the top candidates: each of hybrid's top
 * 20 chunks scored by its best sentence's cosine to the question (POST /datasets/{id}/embed),
 * alone and averaged with the fused score. Measured here, not served: see the README.
 */
async function sentenceRescored(s: Served, datasetId: string, questions: QaQuestion[]) {
  const call = callerOf(s);
  const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);
  const ranks = { best: [] as number[], mixed: [] as number[] };
  for (const q of questions) {
    const out = await call('POST', `/datasets/${datasetId}/search`, { query_text: q.text, top_k: 20, hybrid: true, alpha: 0.7, include_documents: true });
    const hits: { score: number; doc_value?: string; metadata: Chunk['metadata'] }[] = out.results;
    const sentences = hits.map((h) => sentencesOf(h.doc_value ?? '').slice(0, 40));
    const { embeddings } = await call('POST', `/datasets/${datasetId}/embed`, { texts: [q.text, ...sentences.flat()] });
    const [question, ...vectors] = embeddings as number[][];
    let at = 0;
    const best = sentences.map((ss) => Math.max(-1, ...ss.map(() => dot(question, vectors[at++]))));
    const order = (score: (i: number) => number) =>
      hits
        .map((h, i) => ({ h, v: score(i) }))
        .sort((a, b) => b.v - a.v)
        .map(({ h }) => ({ text: '', source: '', metadata: h.metadata }));
    ranks.best.push(passageRank(order((i) => best[i]), q.gold));
    ranks.mixed.push(passageRank(order((i) => 0.5 * (1 - hits[i].score) + 0.5 * best[i]), q.gold));
  }
  const row = (method: string, r: number[]) => ({ method, recall1: r.filter((x) => x === 1).length / r.length, recall5: r.filter((x) => x <= 5).length / r.length });
  return [row('hybrid top 20 re-ranked by its best sentence (local model)', ranks.best), row('the same, averaged with the fused score', ranks.mixed)];
}

async function measure(s: Served, corpus: QaCorpus, limit: number) {
  const call = callerOf(s);
  const t0 = Date.now();
  const { datasetId, chunks } = await ingest(s, corpus);
  const questions = corpus.questions.slice(0, limit);
  log(`${corpus.name}: ${corpus.files.length} files as ${chunks} chunks in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${questions.length} questions`);

  const variants: [string, object][] = [
    ['search, dense only', { hybrid: false }],
    ['search, hybrid alpha 0.7', { hybrid: true, alpha: 0.7 }],
    ['search, hybrid alpha 0.7 + local reranker', { hybrid: true, alpha: 0.7, rerank: true }],
  ];
  const peers: { method: string; recall1: number; recall5: number }[] = [];
  for (const [method, extra] of variants) {
    const ranks: number[] = [];
    for (const q of questions) {
      const out = await call('POST', `/datasets/${datasetId}/search`, { query_text: q.text, top_k: 20, ...extra });
      ranks.push(passageRank(out.results.map((r: { metadata: Chunk['metadata'] }) => ({ text: '', source: '', metadata: r.metadata })), q.gold));
    }
    peers.push({ method, recall1: ranks.filter((r) => r === 1).length / ranks.length, recall5: ranks.filter((r) => r <= 5).length / ranks.length });
  }
  peers.push(...(await sentenceRescored(s, datasetId, questions)));

  await timed(s, { query: 'warm-up: what is this?', dataset_ids: [datasetId] });
  let markers = 0;
  let held = 0;
  const unheld: string[] = [];
  const first: number[] = [];
  const done: number[] = [];
  const asked: Asked[] = [];
  for (const q of questions) {
    const body = { query: q.text, dataset_ids: [datasetId] };
    const t = await timed(s, body);
    first.push(t.firstMs);
    done.push(t.doneMs);
    const out = await call('POST', '/intelligence/query', { ...body, stream: false });
    const answer: string = out.answer;
    const sources: { name: string; relevance: number; chunks: { text: string }[] }[] = out.sources;
    for (const m of answer.matchAll(/([^[\]]+?)\s\[(\d+)\]/g)) {
      markers++;
      const cited = sources[Number(m[2]) - 1];
      if (cited && cited.chunks.some((c) => normalize(c.text).includes(normalize(m[1])))) held++;
      else if (unheld.length < 10) unheld.push(`[${m[2]}] "${normalize(m[1])}" (${cited ? cited.name : 'no such source'})`);
    }
    const sentences = sentencesOf(answer.replace(/\s*\[\d+\]/g, ''));
    const firstSentence = sentences[0] ?? '';
    const section = normalize(q.section);
    asked.push({
      question: q.text,
      answer,
      key: q.key,
      keyHeld: q.key !== '' && normalize(answer.replace(/\s*\[\d+\]/g, '')).includes(normalize(q.key)),
      rank: passageRank(out.chunks, q.gold),
      noAnswer: NO_ANSWER.test(answer),
      headingFirst: firstSentence !== '' && isHeading(firstSentence, [...corpus.headings, q.text]),
      boilerplate: sentences.find((x) => BOILERPLATE.some((re) => re.test(x)) && !section.includes(normalize(x))) ?? null,
      relevance: sources[0]?.relevance ?? 0,
    });
  }
  const unanswered: { question: string; answer: string; sources: number; relevance: number }[] = [];
  for (const q of corpus.unanswerable) {
    const out = await call('POST', '/intelligence/query', { query: q, dataset_ids: [datasetId], stream: false });
    unanswered.push({ question: q, answer: out.answer, sources: out.sources.length, relevance: out.sources[0]?.relevance ?? 0 });
  }
  const n = asked.length;
  const share = (f: (a: Asked) => boolean) => asked.filter(f).length / Math.max(1, n);
  const goldFirst = asked.filter((a) => a.rank === 1);
  return {
    corpus: corpus.name,
    describe: corpus.describe,
    files: corpus.files.length,
    chunks,
    questions: n,
    qa: {
      recall1: share((a) => a.rank === 1),
      recall5: share((a) => a.rank <= 5),
      keySentence: share((a) => a.keyHeld),
      keySentenceGoldFirst: goldFirst.filter((a) => a.keyHeld).length / Math.max(1, goldFirst.length),
      headingFirst: asked.filter((a) => a.headingFirst).length,
      boilerplate: asked.filter((a) => a.boilerplate !== null).length,
      noAnswer: share((a) => a.noAnswer),
      unanswerableNoAnswer: unanswered.filter((u) => NO_ANSWER.test(u.answer) && u.sources > 0).length / unanswered.length,
      markers,
      markersHeld: markers ? held / markers : 1,
    },
    latency: latencyOf(first, done),
    peers,
    answers: asked,
    unanswered,
    unheld,
  };
}

function latencyOf(first: number[], done: number[]) {
  const [firstP50, firstP99] = percentiles(Float64Array.from(first), [0.5, 0.99]);
  const [doneP50, doneP99] = percentiles(Float64Array.from(done), [0.5, 0.99]);
  return { firstP50, firstP99, doneP50, doneP99 };
}

type Figures = Awaited<ReturnType<typeof measure>>;

function report(f: Figures): string[] {
  const { qa, latency } = f;
  const step = Math.max(1, Math.floor(f.answers.length / 10));
  return [
    `## ${f.corpus}`,
    '',
    `${f.describe}: ${f.chunks} chunks; ${f.questions} questions (its headings that are questions), each asked with the default mode and top_k 5.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| recall@1 / @5 of the passages answered from (gold section first / among five) | ${pct(qa.recall1)} / ${pct(qa.recall5)} |`,
    `| answers holding the gold section's key sentence (its first sentence) | ${pct(qa.keySentence)} |`,
    `| the same, of the answers whose first passage is the gold section | ${pct(qa.keySentenceGoldFirst)} |`,
    `| answers whose first sentence is the question or a heading | ${qa.headingFirst} |`,
    `| answers quoting a licence or navigation text | ${qa.boilerplate} |`,
    `| answers saying no answer was found (every question here has one) | ${pct(qa.noAnswer)} |`,
    `| ${f.unanswered.length} questions no file answers (another FAQ's): "no answer found" with the closest sources | ${pct(qa.unanswerableNoAnswer)} |`,
    `| [n] markers whose sentence is in a chunk of source n | ${pct(qa.markersHeld)} (${qa.markers} markers) |`,
    `| time to the first chunk, p50 / p99 (SSE) | ${latency.firstP50.toFixed(1)} / ${latency.firstP99.toFixed(1)} ms |`,
    `| time to done, p50 / p99 (SSE) | ${latency.doneP50.toFixed(1)} / ${latency.doneP99.toFixed(1)} ms |`,
    '',
    'The search route on the same chunks (top_k 20, passages in rank order):',
    '',
    '| method | recall@1 | recall@5 |',
    '|---|---|---|',
    ...f.peers.map((r) => `| ${r.method} | ${pct(r.recall1)} | ${pct(r.recall5)} |`),
    `| intelligence query (the passages it answered from) | ${pct(qa.recall1)} | ${pct(qa.recall5)} |`,
    '',
    ...(f.unheld.length ? ['Markers whose sentence was not found in the cited chunks:', '', ...f.unheld.map((m) => `- ${m}`), ''] : []),
    ...listed('Answers that open with the question or a heading', f.answers.filter((a) => a.headingFirst).map((a) => `${a.question}: ${clip(a.answer)}`)),
    ...listed('Answers quoting a licence or navigation text', f.answers.filter((a) => a.boilerplate).map((a) => `${a.question}: "${a.boilerplate}"`)),
    ...listed('Questions of another FAQ answered anyway (relevance of the first source)', f.unanswered.filter((u) => !NO_ANSWER.test(u.answer)).map((u) => `${u.question} (${u.relevance.toFixed(3)}): ${clip(u.answer)}`)),
    'Ten answers (every ' + ordinal(step) + ' question), with the gold section\'s key sentence:',
    '',
    ...f.answers
      .filter((_, i) => i % step === 0)
      .slice(0, 10)
      .flatMap((a) => [`- **${a.question}**`, `  - answer: ${a.answer.replace(/\s+/g, ' ').trim() || '(empty)'}`, `  - key sentence${a.keyHeld ? ' (held)' : ''}: ${a.key}`]),
    '',
  ];
}

function listed(title: string, items: string[]): string[] {
  return items.length ? [`${title} (${items.length}, first ten):`, '', ...items.slice(0, 10).map((m) => `- ${m}`), ''] : [];
}

const clip = (s: string) => (s.replace(/\s+/g, ' ').length > 200 ? s.replace(/\s+/g, ' ').slice(0, 199) + '…' : s.replace(/\s+/g, ' '));
const ordinal = (n: number) => (n === 1 ? '' : n === 2 ? 'second' : n === 3 ? 'third' : `${n}th`);

async function main(): Promise<void> {
  const chosen = (args.get('corpus') ?? Object.keys(CORPORA).join(',')).split(',');
  for (const c of chosen) if (!CORPORA[c]) throw new Error(`no corpus ${c}: ${Object.keys(CORPORA).join(', ')}`);
  const limit = args.has('limit') ? Number(args.get('limit')) : Infinity;
  const cpu = cpuInfo();
  const head = [
    '# Question answering on real documentation',
    '',
    `Commit ${gitCommit()}, ${cpu.model} (${cpu.cores} CPUs), Node ${process.versions.node}, load average ${loadavg()[0].toFixed(2)} at the start; ${new Date().toISOString()}.`,
    '`sable serve` with its defaults (extractive answerer, no model); each corpus in its own dataset, uploaded through a file_upload source.',
    '',
  ];
  const figures: Figures[] = [];
  const s = await serve('sable-bench-qa-');
  try {
    for (const c of chosen) {
      const f = await measure(s, CORPORA[c](), limit);
      log(`${f.corpus}: recall@1 ${pct(f.qa.recall1)}, key sentence ${pct(f.qa.keySentence)}, unanswerable ${pct(f.qa.unanswerableNoAnswer)}`);
      figures.push(f);
    }
  } finally {
    await s.stop();
  }
  const lines = [...head, ...figures.flatMap(report)];
  const out = args.get('out') ?? join(paths.root, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'qa.md'), lines.join('\n'));
  writeFileSync(join(out, 'qa.json'), JSON.stringify({ commit: gitCommit(), node: process.versions.node, corpora: figures }, null, 2));
  process.stdout.write(lines.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
