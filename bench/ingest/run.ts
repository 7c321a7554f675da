// `npm run bench:ingest`: documents through the whole ingestion path of a running service
// (`sable serve` in a child process on a fresh data directory, the local embedding model): a
// file_upload source, presigned PUTs, upload/complete, then the job is timed to its end. The
// corpus is the documentation of a few Debian packages plus generated PDF, DOCX and XLSX files
// (corpus.ts); it runs once, then doubled (every file again under another name) on a fresh
// service, to see whether peak memory follows the corpus. The peer, measured in the same run on
// the same machine: the local model embedding the very chunks the pipeline made, alone (the
// pipeline's ceiling), and the bench:embed measure (documentation sentences).
//
//   --quick   the Debian FAQ and reference only, 5 generated files of each kind (default 15)
//   --out=DIR where the report goes (default bench/results)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEmbeddingModel } from '../../engine/index.js';
import { chunkingFor } from '../../ingest/pipeline/budget.js';
import { ParsePool } from '../../ingest/parse/parse-pool.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { Rng } from '../../testkit/rng.js';
import { memoryOf } from '../bulk/proc-memory.js';
import { loadSentences } from '../embed/sentences.js';
import { callerOf, serve } from '../service.js';
import { debianDocuments, fetchPackages, generatedDocuments, PACKAGES, type CorpusFile } from './corpus.js';

const args = new Map(process.argv.slice(2).map((a) => (a.includes('=') ? [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a.slice(2), 'true'])));
const log = (m: string) => process.stderr.write(`[ingest] ${m}\n`);
const quick = args.has('quick');
const THREADS = Math.min(2, availableParallelism());

interface Run {
  files: number;
  megabytes: number;
  seconds: number;
  documents: number;
  failed: number;
  chunks: number;
  /** Word pieces the model saw: chunk tokens plus [CLS] and [SEP] per chunk. */
  modelTokens: number;
  peakRssMb: number;
  /** RSS of the started service with its empty dataset, before the upload. */
  idleRssMb: number;
  /** What the dataset's native segments hold at the end (stats memory_bytes). */
  indexMb: number;
  /** Largest anonymous (heaps, buffers) and file-backed (LMDB pages, mapped files) RSS seen while sampling. */
  anonPeakMb: number;
  filePeakMb: number;
  vectors: number;
  stages: Record<string, { seconds: number; items: number }>;
  failures: string[];
}

async function ingest(files: CorpusFile[], label: string): Promise<Run> {
  const s = await serve('sable-bench-ingest-');
  const call = callerOf(s);
  try {
    const ds = await call('POST', '/datasets', { name: 'corpus' });
    await call('POST', `/datasets/${ds.id}/ensure-engine`);
    await call('POST', `/datasets/${ds.id}/embed`, { texts: ['warm the model up'] });
    const idle = memoryOf(s.child.pid!).rss;
    const src = await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'corpus', config: {} });
    const init = await call('POST', `/ingestion/sources/${src.id}/upload/init`, { dataset_id: ds.id, files: files.map((f) => ({ name: f.name, size_bytes: f.bytes.byteLength, content_type: f.type })) });
    for (const [i, u] of init.uploads.entries()) {
      const put = await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': files[i].type }, body: Buffer.from(files[i].bytes) });
      if (put.status !== 200) throw new Error(`PUT ${files[i].name}: ${put.status} ${await put.text()}`);
    }
    log(`${label}: ${files.length} files uploaded; ingesting`);
    const t0 = performance.now();
    await call('POST', `/ingestion/sources/${src.id}/upload/complete`, { job_id: init.job_id, file_ids: init.uploads.map((u: { file_id: string }) => u.file_id) });
    let job;
    let last = 0;
    let anonPeak = 0;
    let filePeak = 0;
    for (;;) {
      const now = memoryOf(s.child.pid!);
      anonPeak = Math.max(anonPeak, now.anon);
      filePeak = Math.max(filePeak, now.file);
      job = await call('GET', `/ingestion/jobs/${init.job_id}`);
      if (job.status === 'completed' || job.status === 'failed') break;
      if (performance.now() - last > 10_000) {
        last = performance.now();
        log(`${label}: ${job.progress_percentage}% after ${((last - t0) / 1000).toFixed(0)} s (${job.documents_processed} documents)`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - t0) / 1000;
    const peak = memoryOf(s.child.pid!).peak;
    let chunks = 0;
    let tokens = 0;
    let cursor: string | null = null;
    do {
      const page: { documents: { status: string; chunk_count: number; tokens: number }[]; next_cursor: string | null } = await call('GET', `/datasets/${ds.id}/documents?limit=200&status=ready${cursor ? `&cursor=${cursor}` : ''}`);
      for (const d of page.documents) {
        chunks += d.chunk_count;
        tokens += d.tokens;
      }
      cursor = page.next_cursor;
    } while (cursor);
    const failures = (await call('GET', `/ingestion/jobs/${init.job_id}/files?status=failed&limit=200`)).files.map((f: any) => `${f.file_name}: ${f.error_type}: ${f.error_message}`);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    const stages: Run['stages'] = {};
    for (const m of metrics.matchAll(/^sable_ingest_stage_(seconds|items)_total\{stage="(\w+)"\} ([0-9.e+-]+)$/gm)) {
      stages[m[2]] ??= { seconds: 0, items: 0 };
      stages[m[2]][m[1] as 'seconds' | 'items'] = Number(m[3]);
    }
    const stats = await call('GET', `/datasets/${ds.id}/stats`);
    const vectors = stats.vector_count;
    const run: Run = {
      files: files.length,
      megabytes: files.reduce((n, f) => n + f.bytes.byteLength, 0) / 2 ** 20,
      seconds,
      documents: job.documents_processed,
      failed: failures.length,
      chunks,
      modelTokens: tokens + 2 * chunks,
      peakRssMb: peak / 2 ** 20,
      idleRssMb: idle / 2 ** 20,
      indexMb: stats.memory_bytes / 2 ** 20,
      anonPeakMb: anonPeak / 2 ** 20,
      filePeakMb: filePeak / 2 ** 20,
      vectors,
      stages,
      failures,
    };
    log(`${label}: ${run.documents} documents, ${chunks} chunks in ${seconds.toFixed(1)} s: ${(run.modelTokens / seconds).toFixed(0)} tokens/s, peak RSS ${run.peakRssMb.toFixed(0)} MB`);
    return run;
  } finally {
    await s.stop();
  }
}

/** The chunks the pipeline makes of these files (same parsers, same budget), parsed here. */
async function chunkTexts(files: CorpusFile[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sable-bench-chunks-'));
  const pool = new ParsePool({ threads: THREADS });
  try {
    const texts: string[] = [];
    await Promise.all(
      files.map(async (f, i) => {
        const path = join(dir, String(i));
        writeFileSync(path, f.bytes);
        const r = await pool.parse({ path, name: f.name, contentType: f.type, maxBytes: 100 * 2 ** 20, chunking: chunkingFor('local') }, 600_000);
        if (r.ok) texts.push(...r.chunks.map((c) => c.text));
      }),
    );
    return texts;
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tokens per second of the local model alone over `texts`, in batches of `batch` (best of two passes). */
async function embedRate(model: LocalEmbeddingModel, texts: string[], batch: number): Promise<{ seconds: number; tokens: number }> {
  const tokens = texts.reduce((n, t) => n + model.countTokens(t) + 2, 0);
  await model.embed(texts.slice(0, 32));
  let best = Infinity;
  for (let rep = 0; rep < 2; rep++) {
    const t0 = performance.now();
    for (let i = 0; i < texts.length; i += batch) await model.embed(texts.slice(i, i + batch));
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return { seconds: best, tokens };
}

async function main(): Promise<void> {
  const problem = fetchPackages(log);
  if (problem) {
    log(problem);
    process.exit(1);
  }
  let docs = debianDocuments();
  if (quick) docs = docs.filter((f) => !f.name.includes('nodejs'));
  const generated = await generatedDocuments(docs, quick ? 5 : 15);
  const corpus = [...docs, ...generated];
  const doubled = [...corpus, ...corpus.map((f) => ({ ...f, name: `copy/${f.name}` }))];
  const kinds = new Map<string, number>();
  for (const f of corpus) kinds.set(f.type, (kinds.get(f.type) ?? 0) + 1);
  log(`corpus: ${corpus.length} files, ${(corpus.reduce((n, f) => n + f.bytes.byteLength, 0) / 2 ** 20).toFixed(1)} MB (${[...kinds].map(([k, v]) => `${v} ${k}`).join(', ')})`);
  const load0 = loadavg()[0];

  const one = await ingest(corpus, 'corpus');
  const two = await ingest(doubled, 'corpus x2');

  log('the peer: the local model alone on the same chunks, then on bench:embed sentences');
  // A seeded sample of the chunks keeps the peer to a few minutes; its rate is that of the whole.
  const all = await chunkTexts(corpus);
  const rng = new Rng(7);
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  const texts = all.slice(0, 3000);
  const model = LocalEmbeddingModel.open({ threads: THREADS });
  const ceiling = await embedRate(model, texts, 128);
  const sentences = await embedRate(model, loadSentences().slice(0, 2000), 512);
  model.close();
  const ceilingRate = ceiling.tokens / ceiling.seconds;
  const sentenceRate = sentences.tokens / sentences.seconds;
  log(`model alone: ${ceilingRate.toFixed(0)} tokens/s on the chunks, ${sentenceRate.toFixed(0)} on sentences`);

  const rate = (r: Run) => r.modelTokens / r.seconds;
  const stageRows = (r: Run) => {
    const total = Object.values(r.stages).reduce((n, s) => n + s.seconds, 0);
    return ['fetch', 'parse', 'chunk', 'embed', 'index']
      .map((k) => `| ${k} | ${(r.stages[k]?.seconds ?? 0).toFixed(1)} | ${(((r.stages[k]?.seconds ?? 0) / total) * 100).toFixed(1)} % | ${r.stages[k]?.items ?? 0} |`)
      .join('\n');
  };
  const row = (name: string, r: Run) =>
    `| ${name} | ${r.files} | ${r.megabytes.toFixed(1)} | ${r.documents} | ${r.failed} | ${r.chunks} | ${r.seconds.toFixed(1)} | ${(r.documents / r.seconds).toFixed(2)} | ${(r.chunks / r.seconds).toFixed(1)} | ${(r.megabytes / r.seconds).toFixed(3)} | ${rate(r).toFixed(0)} | ${r.peakRssMb.toFixed(0)} |`;
  const memRow = (name: string, r: Run) =>
    `| ${name} | ${r.idleRssMb.toFixed(0)} | ${r.peakRssMb.toFixed(0)} | ${r.indexMb.toFixed(0)} | ${(r.peakRssMb - r.idleRssMb - r.indexMb).toFixed(0)} | ${r.anonPeakMb.toFixed(0)} | ${r.filePeakMb.toFixed(0)} |`;
  const cpu = cpuInfo();
  const md = `# Ingestion benchmark

Commit ${gitCommit()}, ${cpu.model} (${availableParallelism()} CPUs), load average ${load0.toFixed(2)} at the start${quick ? ', quick mode' : ''}.
\`sable serve\` with its defaults (local model on ${THREADS} embedding threads, 1 parse thread, 2 files in flight), a fresh data
directory per run; from \`upload/complete\` to the job's end. Corpus: ${PACKAGES.join(', ')} (HTML, Markdown, text, PDF) and
${quick ? 5 : 15} generated files each of PDF, DOCX and XLSX. Tokens are what the model sees (chunk word pieces plus [CLS] and [SEP]).

| run | files | MB | documents | failed | chunks | seconds | documents/s | chunks/s | MB/s | tokens/s | peak RSS MB |
|---|---|---|---|---|---|---|---|---|---|---|---|
${row('corpus', one)}
${row('corpus x2', two)}

Peak RSS doubled corpus / corpus: ${(two.peakRssMb / one.peakRssMb).toFixed(2)}x (vectors held: ${one.vectors} and ${two.vectors}). What it is made of
(MB): the service started with its empty dataset and the model loaded (idle), the dataset's native segments at the end
(index: vectors, graph, filter columns), and the rest of the peak: the pipeline's working memory and the pages of the
LMDB files the writes touched. Sampled every 100 ms during the run: the largest anonymous RSS (heaps, buffers, the
index) and the largest file-backed RSS (mapped files: LMDB's pages).

| run | idle RSS | peak RSS | index | peak - idle - index | anonymous (max) | file-backed (max) |
|---|---|---|---|---|---|---|
${memRow('corpus', one)}
${memRow('corpus x2', two)}

The peer, same machine, same run: the local model alone, ${THREADS} threads.

| measure | tokens/s | pipeline (corpus) / it |
|---|---|---|
| embedding ${texts.length} of the pipeline's ${all.length} chunks (seeded sample), batches of 128 | ${ceilingRate.toFixed(0)} | ${((rate(one) / ceilingRate) * 100).toFixed(1)} % |
| bench:embed: 2000 documentation sentences, batches of 512 | ${sentenceRate.toFixed(0)} | ${((rate(one) / sentenceRate) * 100).toFixed(1)} % |

Where the time goes (corpus run; seconds summed over the files in flight, so they add up to more than the wall time):

| stage | seconds | share | items |
|---|---|---|---|
${stageRows(one)}
${one.failures.length ? `\nFiles that failed:\n\n${one.failures.map((f) => `- ${f}`).join('\n')}\n` : ''}`;
  const out = args.get('out') ?? join(paths.root, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'ingest.md'), md);
  writeFileSync(join(out, 'ingest.json'), JSON.stringify({ commit: gitCommit(), quick, one, two, ceiling: { chunks: texts.length, of: all.length, ...ceiling, rate: ceilingRate }, sentences: { ...sentences, rate: sentenceRate } }, null, 2));
  process.stdout.write(md);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
