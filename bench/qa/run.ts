// `npm run bench:qa`: question answering on the Debian FAQ through the running service. Every
// numbered section is uploaded as its own text file through a file_upload source (parsed,
// chunked, embedded, indexed by the ingestion job); every section heading that is a question is
// asked of POST /intelligence/query (SSE, default mode, top_k 5), and the section it heads is the
// gold document. Measured per run, on the same dataset:
//   - recall@1 / @5 of the answer's sources (the gold document first / among the first five);
//   - the share of [n] markers whose sentence is found verbatim in a chunk of source n (target 100 %);
//   - the share of answers holding the gold section's key sentence (its first sentence);
//   - time to the first chunk and to `done` (p50, p99; target: first chunk under 50 ms at p99);
//   - the peers: the search route on the same chunks, dense only (the baseline), hybrid, and
//     hybrid with the local reranker, each as documents in rank order; and bench:retrieval's
//     section-level dense figure from its last results.
//
//   --out=DIR   where the report goes (default bench/results)
//   --limit=N   ask the first N questions only
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { sentencesOf, normalize } from '../../answer/synthesis/sentences.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { ensureDebianFaq, readFaq } from '../retrieval/debian-faq.js';
import { readFrames, type Frame } from '../../test/support/sse.js';
import { callerOf, serve } from '../service.js';

const args = new Map(process.argv.slice(2).map((a) => (a.includes('=') ? [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a.slice(2), 'true'])));
const log = (m: string) => process.stderr.write(`[qa] ${m}\n`);

/** One question through the SSE route: frames, time to the first frame and to the end. */
async function ask(url: string, key: string, body: object): Promise<{ frames: Frame[]; firstMs: number; doneMs: number }> {
  const t0 = performance.now();
  const res = await fetch(url + '/intelligence/query', { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`query: ${res.status} ${await res.text()}`);
  let firstMs = NaN;
  const frames = await readFrames(res, { onFrame: () => (firstMs = Number.isNaN(firstMs) ? performance.now() - t0 : firstMs) });
  return { frames, firstMs, doneMs: performance.now() - t0 };
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
/**
 * Questions the Debian FAQ does not answer: headings of another project's FAQ (Celery's, in
 * Debian's python-celery-doc). Each should get "no answer" and the closest sources.
 */
const UNANSWERABLE = [
  'What kinds of things should I use Celery for?',
  'Does Celery have many dependencies?',
  'Is Celery dependent on pickle?',
  'Is Celery for Django only?',
  'Do I have to use AMQP/RabbitMQ?',
  'MySQL is throwing deadlock errors, what can I do?',
  'Why is Task.delay/apply*/the worker just hanging?',
  "Why won't my periodic task run?",
  'How do I purge all waiting tasks?',
  'How do I get the result of a task if I have the ID that points there?',
  'Why is RabbitMQ crashing?',
  'Can I use Celery with ActiveMQ/STOMP?',
  'Can I call a task by name?',
  'Can I get the task id of the current task?',
  'Can I cancel the execution of a task?',
  'Can I disable prefetching of tasks?',
  'Does Celery support task priorities?',
  'Should I use retry or acks_late?',
  'Can I schedule tasks to execute at a specific time?',
  'Does Celery support Windows?',
];

/** The extractive answerer's words when nothing answers (answer/service.ts). */
const NO_ANSWER = /^I found nothing in the datasets in scope that answers this question/;

async function main(): Promise<void> {
  const missing = ensureDebianFaq(!args.has('no-install'));
  if (missing) throw new Error(missing);
  const sections = readFaq();
  const limit = args.has('limit') ? Number(args.get('limit')) : Infinity;
  const questions = sections.map((s, i) => ({ text: s.heading, gold: i })).filter((q) => q.text.endsWith('?')).slice(0, limit);
  const fileOf = (i: number) => `faq-${sections[i].number}.txt`;
  const bodies = sections.map((s) => s.body.replace(/([^\n])\n(?!\n)/g, '$1 '));

  const s = await serve('sable-bench-qa-');
  const call = callerOf(s);
  try {
    const ds = await call('POST', '/datasets', { name: 'debian-faq' });
    await call('POST', `/datasets/${ds.id}/ensure-engine`);
    const src = await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'faq', config: {} });
    const files = sections.map((_, i) => ({ name: fileOf(i), bytes: Buffer.from(bodies[i]) }));
    const init = await call('POST', `/ingestion/sources/${src.id}/upload/init`, { dataset_id: ds.id, files: files.map((f) => ({ name: f.name, size_bytes: f.bytes.byteLength, content_type: 'text/plain' })) });
    for (const [i, u] of init.uploads.entries()) {
      const put = await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: files[i].bytes });
      if (put.status !== 200) throw new Error(`PUT ${files[i].name}: ${put.status}`);
    }
    await call('POST', `/ingestion/sources/${src.id}/upload/complete`, { job_id: init.job_id, file_ids: init.uploads.map((u: { file_id: string }) => u.file_id) });
    let job;
    while ((job = await call('GET', `/ingestion/jobs/${init.job_id}`)).status !== 'completed') {
      if (job.status === 'failed') throw new Error(`ingestion failed: ${job.message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const stats = await call('GET', `/datasets/${ds.id}/stats`);
    log(`${sections.length} sections ingested as ${stats.vector_count} chunks; asking ${questions.length} questions`);

    // Peers: the search route on the same chunks, as documents in rank order.
    const variants: [string, object][] = [
      ['search, dense only (baseline)', { hybrid: false }],
      ['search, hybrid alpha 0.7', { hybrid: true, alpha: 0.7 }],
      ['search, hybrid alpha 0.7 + local reranker', { hybrid: true, alpha: 0.7, rerank: true }],
    ];
    const peerRows: { method: string; recall1: number; recall5: number }[] = [];
    for (const [method, extra] of variants) {
      let r1 = 0;
      let r5 = 0;
      for (const q of questions) {
        const out = await call('POST', `/datasets/${ds.id}/search`, { query_text: q.text, top_k: 20, ...extra });
        const docs = [...new Set(out.results.map((r: { metadata: { name: string } }) => r.metadata.name))];
        if (docs[0] === fileOf(q.gold)) r1++;
        if (docs.slice(0, 5).includes(fileOf(q.gold))) r5++;
      }
      peerRows.push({ method, recall1: r1 / questions.length, recall5: r5 / questions.length });
      log(`${method}: recall@5 ${pct(r5 / questions.length)}`);
    }

    await ask(s.url, s.key, { query: 'warm-up: what is Debian?', dataset_ids: [ds.id] });
    let r1 = 0;
    let r5 = 0;
    let markers = 0;
    let held = 0;
    let keyHeld = 0;
    const first: number[] = [];
    const done: number[] = [];
    const misses: string[] = [];
    const unheld: string[] = [];
    const answers: { question: string; answer: string; key: string; keyHeld: boolean; goldFirst: boolean; noAnswer: boolean; relevance: number }[] = [];
    for (const q of questions) {
      const { frames, firstMs, doneMs } = await ask(s.url, s.key, { query: q.text, dataset_ids: [ds.id] });
      first.push(firstMs);
      done.push(doneMs);
      const answer = frames.filter((f) => f.chunk_type === 'text').map((f) => f.content).join('');
      const sources: { name: string; relevance: number; chunks: { text: string }[] }[] = frames.find((f) => f.chunk_type === 'citation')?.metadata.sources ?? [];
      const names = sources.map((x) => x.name);
      if (names[0] === fileOf(q.gold)) r1++;
      if (names.slice(0, 5).includes(fileOf(q.gold))) r5++;
      else if (misses.length < 10) misses.push(`${q.text} -> ${names.slice(0, 3).join(', ')}`);
      for (const m of answer.matchAll(/([^[\]]+?)\s\[(\d+)\]/g)) {
        markers++;
        const cited = sources[Number(m[2]) - 1];
        if (cited && cited.chunks.some((c) => normalize(c.text).includes(normalize(m[1])))) held++;
        else if (unheld.length < 10) unheld.push(`[${m[2]}] "${normalize(m[1])}" (${cited ? cited.name : 'no such source'})`);
      }
      const key = sentencesOf(bodies[q.gold])[0] ?? '';
      const isHeld = key !== '' && normalize(answer).includes(normalize(key));
      if (isHeld) keyHeld++;
      answers.push({ question: q.text, answer, key, keyHeld: isHeld, goldFirst: names[0] === fileOf(q.gold), noAnswer: NO_ANSWER.test(answer), relevance: sources[0]?.relevance ?? 0 });
    }
    // Questions no section answers, and how near their closest source came (against the answerable ones).
    const unanswered: { question: string; answer: string; relevance: number }[] = [];
    for (const q of UNANSWERABLE) {
      const { frames } = await ask(s.url, s.key, { query: q, dataset_ids: [ds.id] });
      const answer = frames.filter((f) => f.chunk_type === 'text').map((f) => f.content).join('');
      const top: { relevance?: number } | undefined = frames.find((f) => f.chunk_type === 'citation')?.metadata.sources?.[0];
      unanswered.push({ question: q, answer, relevance: top?.relevance ?? 0 });
    }
    const n = questions.length;
    const withGoldFirst = answers.filter((a) => a.goldFirst);
    const qa = {
      recall1: r1 / n,
      recall5: r5 / n,
      markers,
      markersHeld: markers ? held / markers : 1,
      keySentence: keyHeld / n,
      keySentenceGoldFirst: withGoldFirst.filter((a) => a.keyHeld).length / Math.max(1, withGoldFirst.length),
      noAnswer: answers.filter((a) => a.noAnswer).length / n,
      unanswerableNoAnswer: unanswered.filter((u) => NO_ANSWER.test(u.answer)).length / unanswered.length,
    };
    const latency = { firstP50: quantile(first, 0.5), firstP99: quantile(first, 0.99), doneP50: quantile(done, 0.5), doneP99: quantile(done, 0.99) };
    const retrievalFile = join(paths.root, 'bench', 'results', 'retrieval.json');
    const sectionDense = existsSync(retrievalFile) ? (JSON.parse(readFileSync(retrievalFile, 'utf8')).rows as { method: string; recall5: number }[]).find((r) => r.method.startsWith('dense')) : undefined;

    const cpu = cpuInfo();
    const lines = [
      '# Question answering on the Debian FAQ',
      '',
      `Commit ${gitCommit()}, ${cpu.model} (${cpu.cores} CPUs), load average ${loadavg()[0].toFixed(2)} at the start; ${new Date().toISOString()}.`,
      `\`sable serve\` with its defaults (extractive answerer, no model); ${sections.length} FAQ sections uploaded as text files through a file_upload source`,
      `(${stats.vector_count} chunks); ${n} questions (the section headings that are questions), each asked once over SSE with the default mode and top_k 5;`,
      'the gold document is the section the heading heads.',
      '',
      '| measure | value |',
      '|---|---|',
      `| recall@1 of the answer's sources | ${pct(qa.recall1)} |`,
      `| recall@5 of the answer's sources | ${pct(qa.recall5)} |`,
      `| [n] markers whose sentence is in a chunk of source n | ${pct(qa.markersHeld)} (${qa.markers} markers) |`,
      `| answers holding the gold section's first sentence | ${pct(qa.keySentence)} |`,
      `| the same, of the answers whose first source is the gold section | ${pct(qa.keySentenceGoldFirst)} |`,
      `| answers that say no answer was found (every question here has one) | ${pct(qa.noAnswer)} |`,
      `| ${UNANSWERABLE.length} questions no section answers (Celery's FAQ): answered "no answer found" | ${pct(qa.unanswerableNoAnswer)} |`,
      `| time to the first chunk, p50 / p99 | ${latency.firstP50.toFixed(1)} / ${latency.firstP99.toFixed(1)} ms |`,
      `| time to done, p50 / p99 | ${latency.doneP50.toFixed(1)} / ${latency.doneP99.toFixed(1)} ms |`,
      '',
      'Peers in the same run, on the same chunks (POST /datasets/{id}/search, top_k 20, chunks to documents in rank order):',
      '',
      '| method | recall@1 | recall@5 |',
      '|---|---|---|',
      ...peerRows.map((r) => `| ${r.method} | ${pct(r.recall1)} | ${pct(r.recall5)} |`),
      `| intelligence query (its sources) | ${pct(qa.recall1)} | ${pct(qa.recall5)} |`,
      '',
      sectionDense ? `bench:retrieval's dense baseline (whole sections, not chunks; its last run): recall@5 ${pct(sectionDense.recall5)}.` : "bench:retrieval's results were not found.",
      '',
      'Questions whose gold document was not among the first five sources (first ten):',
      '',
      ...misses.map((m) => `- ${m}`),
      '',
      ...(unheld.length ? ['Markers whose sentence was not found in the cited chunks (first ten):', '', ...unheld.map((m) => `- ${m}`), ''] : []),
      `Questions no section answers, answered anyway (relevance of the first source):`,
      '',
      ...unanswered.filter((u) => !NO_ANSWER.test(u.answer)).map((u) => `- ${u.question} (${u.relevance.toFixed(3)}): ${u.answer.replace(/\s+/g, ' ').slice(0, 160)}`),
      '',
      'Ten answers (every twelfth question), with the gold section\'s first sentence:',
      '',
      ...answers.filter((_, i) => i % 12 === 0).slice(0, 10).flatMap((a) => [`- **${a.question}**`, `  - answer: ${a.answer.replace(/\s+/g, ' ').trim() || '(empty)'}`, `  - gold first sentence${a.keyHeld ? ' (held)' : ''}: ${a.key}`]),
      '',
    ];
    const out = args.get('out') ?? join(paths.root, 'bench', 'results');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'qa.md'), lines.join('\n'));
    writeFileSync(join(out, 'qa.json'), JSON.stringify({ commit: gitCommit(), sections: sections.length, chunks: stats.vector_count, questions: n, qa, latency, peers: peerRows, sectionDense: sectionDense ?? null, answers, unanswered }, null, 2));
    process.stdout.write(lines.join('\n'));
  } finally {
    await s.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
