// `npm run bench:bulk [-- --rows=N --dim=D --peer=lancedb|none]`: the bulk Parquet path end to
// end, beside LanceDB. Generates a file of N x D float32 vectors with an id and two metadata
// columns (streamed, a row group at a time; cached), measures the decode ceilings (the core's
// reader, which loads use, and parquet-wasm, each alone in its own process), then starts `sable serve` on a fresh data directory, uploads the file
// through the presigned URL, and times upload/complete -> job completed -> index ready -> one
// search. Then, with the service stopped, the same file into LanceDB in a process of its own
// (lancedb.ts): table written, IVF_PQ index built, one query. Peak RSS of each comes from /proc
// (VmHWM). Writes bench/results/bulk.md and bulk.json. `--generate-only` stops after writing the file.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { fileAccess, readFooter, rowGroupFile, rowGroupRows } from '../../bulk/parquet/row-group-file.js';
import { ensureLancedb } from '../ann/env.js';
import { LANCEDB_PREFIX, LANCEDB_VERSION } from '../ann/libs/lancedb.js';
import { paths, repoRoot } from '../ann/paths.js';
import { Rng } from '../../testkit/rng.js';
import { Progress } from '../progress.js';
import { writeParquetStream } from '../../testkit/parquet-writer.js';
import { memoryOf } from './proc-memory.js';

const args: Record<string, string> = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, ...v] = a.replace(/^--/, '').split('=');
    return [k, v.length > 0 ? v.join('=') : 'true'];
  }),
);
const ROWS = Number(args.rows ?? 1_000_000);
const DIM = Number(args.dim ?? 768);
const GROUP = Number(args.group ?? 5000);
// --files=N: the rows split over N files of one job (ids continue across them).
const FILES = Number(args.files ?? 1);
// --peer=none: Sable alone. --lance-add-rows=R: rows per LanceDB write (default: one write per row group).
const PEER = args.peer ?? 'lancedb';
// The row whose vector both sides are asked for once loaded: its own id should come first.
const QUERY_ROW = 0;
const PARQUET = 'application/vnd.apache.parquet';
const MB = 2 ** 20;
const say = (m: string) => process.stderr.write(`[bulk] ${m}\n`);

/** Writes rows [first, first + rows) of the data set (seeded by its first row) into `file`. */
async function generate(file: string, first: number, rows: number): Promise<void> {
  if (existsSync(file)) {
    say(`reusing ${file}`);
    return;
  }
  say(`writing ${rows} x ${DIM} to ${file}`);
  const rng = new Rng(20261122 + first);
  const centres = Float32Array.from({ length: 64 * DIM }, () => rng.gauss());
  const categories = Array.from({ length: 16 }, (_, i) => `category-${i}`);
  const end = first + rows;
  let next = first;
  const progress = new Progress(`[bulk] writing ${file}`, 'rows');
  await writeParquetStream(file, () => {
    if (next >= end) return null;
    const n = Math.min(GROUP, end - next);
    const ids = new BigInt64Array(n);
    const vectors = new Float32Array(n * DIM);
    const score = new Float64Array(n);
    const category: string[] = new Array(n);
    for (let r = 0; r < n; r++) {
      const id = next + r;
      ids[r] = BigInt(id);
      const c = rng.int(64);
      for (let j = 0; j < DIM; j++) vectors[r * DIM + j] = centres[c * DIM + j] + 0.5 * rng.gauss();
      score[r] = rng.next();
      category[r] = categories[id % 16];
    }
    next += n;
    progress.update(next - first, rows);
    return { ids, vectors, dim: DIM, metadata: { category, score } };
  }, { rowGroupRows: GROUP });
}

/** decode-native.js: the core's reader, which loads use; decode.js: parquet-wasm. */
function decodeCeiling(file: string, script = 'decode-native.js'): { rows: number; seconds: number; peakRssBytes: number } {
  const out = execFileSync(process.execPath, [join(repoRoot, 'dist', 'bench', 'bulk', script), file], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

/** Reads a file through, to have it in the page cache. */
async function warm(file: string): Promise<void> {
  const f = await open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(8 << 20);
    while ((await f.read(buffer, 0, buffer.length, null)).bytesRead > 0);
  } finally {
    await f.close();
  }
}

async function startService(dataDir: string): Promise<{ child: ChildProcess; url: string; key: string }> {
  // --node-args="--cpu-prof --cpu-prof-dir=DIR" profiles the service.
  const nodeArgs = (args['node-args'] ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(repoRoot, 'dist', 'control-plane', 'cli.js'), 'serve', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (c: Buffer) => {
      seen += String(c);
      const m = /sable listening on (\S+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`sable serve exited with ${code}`)));
  });
  child.stdout!.resume();
  return { child, url, key: readFileSync(join(dataDir, 'admin.key'), 'utf8').trim() };
}

/** Row `row` of the vector column of `file`: the query both sides answer after their load. */
async function vectorAt(file: string, row: number): Promise<Float32Array> {
  const handle = await open(file, 'r');
  try {
    const access = fileAccess(handle, statSync(file).size);
    const footer = await readFooter(access);
    let first = 0;
    for (let g = 0; g < footer.rowGroups.length; g++) {
      const rows = rowGroupRows(footer.rowGroups[g]);
      if (row < first + rows) {
        const pf = await pq.ParquetFile.fromFile(await rowGroupFile(access, footer, g));
        const table = arrow.tableFromIPC((await pf.read({ rowGroups: [0], columns: ['embedding'] })).intoIPCStream());
        pf.free();
        return Float32Array.from(table.getChild('embedding')!.get(row - first)!.toArray() as Float32Array);
      }
      first += rows;
    }
    throw new Error(`${file} has ${first} rows, no row ${row}`);
  } finally {
    await handle.close();
  }
}

/** What the LanceDB child prints (bench/bulk/lancedb.ts). */
interface LanceResult {
  version: string;
  rows: number;
  dim: number;
  adds: number;
  addRows: number;
  writeSeconds: number;
  indexSeconds: number;
  querySeconds: number;
  searchableSeconds: number;
  peakRssBytes: number;
  diskBytes: number;
  numPartitions: number;
  numSubVectors: number;
  index: { numIndexedRows: number; numUnindexedRows: number; indexType: string; distanceType?: string } | null;
  usedIndex: boolean;
  plan: string;
  top1: { id: number; distance: number } | null;
}

/** The same files into LanceDB, in a child process of its own and a fresh directory under bench/.cache/bulk. */
async function runLancedb(files: string[]): Promise<LanceResult> {
  const dir = mkdtempSync(join(paths.cache, 'bulk', 'lancedb-'));
  const argv = [join(repoRoot, 'dist', 'bench', 'bulk', 'lancedb.js'), `--dir=${dir}`, `--rows=${ROWS}`, `--query-row=${QUERY_ROW}`];
  if (args['lance-add-rows']) argv.push(`--add-rows=${Number(args['lance-add-rows'])}`);
  try {
    const child = spawn(process.execPath, [...argv, ...files], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += String(c)));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the LanceDB child exited with ${code}: ${out.trim().split('\n').at(-1) ?? ''}`);
    return JSON.parse(out.trim().split('\n').at(-1)!) as LanceResult;
  } finally {
    if (!args.keep) rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (PEER !== 'lancedb' && PEER !== 'none') throw new Error(`--peer=${PEER}: lancedb or none`);
  const dataDir0 = join(paths.cache, 'bulk');
  mkdirSync(dataDir0, { recursive: true });
  // Installed (once) before the long part, so an install failure shows at once.
  const peerSetup = PEER === 'lancedb' ? ensureLancedb(LANCEDB_PREFIX, LANCEDB_VERSION) : null;
  // --file=PATH loads an existing file (of --rows rows, --dim dimensions) instead of generating one.
  const files: string[] = args.file ? [args.file] : [];
  for (let i = 0; i < FILES && !args.file; i++) {
    const first = Math.floor((ROWS * i) / FILES);
    const rows = Math.floor((ROWS * (i + 1)) / FILES) - first;
    const file = join(dataDir0, FILES === 1 ? `vectors-${ROWS}x${DIM}.parquet` : `vectors-${ROWS}x${DIM}-part${i + 1}of${FILES}.parquet`);
    await generate(file, first, rows);
    files.push(file);
  }
  if (args['generate-only']) return;
  const sizes = files.map((f) => statSync(f).size);
  const bytes = sizes.reduce((a, b) => a + b, 0);
  const query = await vectorAt(files[0], QUERY_ROW);
  say(`${FILES} file(s), ${(bytes / MB).toFixed(0)} MB; decode ceilings (the core's reader, parquet-wasm)...`);
  // Read once first, so every decode below (and the service's, of its uploaded copy) reads from
  // the page cache: earlier runs' data directories may have pushed the file out, and a ceiling
  // read from disk measured 60k rows/s against 100k cached, the same code minutes apart.
  for (const f of files) await warm(f);
  const sum = (parts: { rows: number; seconds: number; peakRssBytes: number }[]) => ({ rows: parts.reduce((a, p) => a + p.rows, 0), seconds: parts.reduce((a, p) => a + p.seconds, 0), peakRssBytes: Math.max(...parts.map((p) => p.peakRssBytes)) });
  const ceiling = sum(files.map((f) => decodeCeiling(f)));
  const wasm = sum(files.map((f) => decodeCeiling(f, 'decode.js')));
  for (const [name, c] of [['core reader', ceiling], ['parquet-wasm', wasm]] as const) {
    say(`decode (${name}): ${c.rows} rows in ${c.seconds.toFixed(1)} s = ${(c.rows / c.seconds).toFixed(0)} rows/s, peak RSS ${(c.peakRssBytes / MB).toFixed(0)} MB`);
  }

  const dataDir = mkdtempSync(join(paths.cache, 'bulk', 'service-'));
  const load0 = loadavg()[0];
  const svc = await startService(dataDir);
  const pid = svc.child.pid!;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(svc.url + path, { method, headers: { 'x-api-key': svc.key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const answer = (await res.json()) as Record<string, any>;
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  let sable;
  try {
    const ds = await call('POST', '/datasets', { name: 'bulk', dim: DIM, metric: 'cosine' });
    await call('POST', `/datasets/${ds.id}/ensure-engine`, {});
    // --buffer=N: the promotion policy's max_buffer_vectors (how often the load seals a partition).
    if (args.buffer) await call('PUT', `/datasets/${ds.id}/promotion-policy`, { max_buffer_vectors: Number(args.buffer), max_buffer_age_ms: 10_000 });
    const rssIdle = memoryOf(pid).rss;
    const init = await call('POST', `/v1/datasets/${ds.id}/upload/init`, {
      files: files.map((f, i) => ({ name: f.split('/').at(-1), size_bytes: sizes[i], content_type: PARQUET })),
    });
    const tUp = Date.now();
    for (const [i, upload] of (init.uploads as { upload_url: string }[]).entries()) {
      await new Promise<void>((resolve, reject) => {
        const req = request(upload.upload_url, { method: 'PUT', headers: { 'content-type': PARQUET, 'content-length': String(sizes[i]) } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT answered ${res.statusCode}`))));
        });
        req.on('error', reject);
        createReadStream(files[i]).pipe(req);
      });
    }
    const uploadSeconds = (Date.now() - tUp) / 1000;
    const rssAfterUpload = memoryOf(pid);
    say(`uploaded in ${uploadSeconds.toFixed(1)} s; service RSS ${(rssAfterUpload.rss / MB).toFixed(0)} MB (peak ${(rssAfterUpload.peak / MB).toFixed(0)})`);

    const t0 = Date.now();
    await call('POST', `/v1/datasets/${ds.id}/upload/complete`, { job_id: init.job_id, file_ids: init.uploads.map((u: { file_id: string }) => u.file_id) });
    let job: Record<string, any>;
    let peakDuringLoad = 0;
    const progress = new Progress('[bulk] loading', 'vectors');
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      peakDuringLoad = Math.max(peakDuringLoad, memoryOf(pid).rss);
      job = await call('GET', `/v1/jobs/${init.job_id}`);
      if (job.status === 'completed' || job.status === 'failed') break;
      const files: { vectors_inserted: number }[] = (await call('GET', `/ingestion/jobs/${init.job_id}/files`)).files;
      progress.update(files.reduce((sum, f) => sum + f.vectors_inserted, 0), ROWS, `service RSS ${(memoryOf(pid).rss / MB).toFixed(0)} MB`);
    }
    const loadSeconds = (Date.now() - t0) / 1000;
    if (job.status !== 'completed') throw new Error(`the job failed: ${JSON.stringify(job.error_details)}`);
    say(`loaded ${job.vectors_inserted} vectors in ${loadSeconds.toFixed(1)} s = ${(job.vectors_inserted / loadSeconds).toFixed(0)} vectors/s`);
    // Searches answer during and after the load; the index builds finish in the background.
    // Polled every 200 ms: the poll's granularity is part of the time to searchable.
    for (;;) {
      const idx = await call('GET', `/datasets/${ds.id}/index`);
      peakDuringLoad = Math.max(peakDuringLoad, memoryOf(pid).rss);
      if (idx.status === 'ready') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const indexSeconds = (Date.now() - t0) / 1000;
    const tQuery = Date.now();
    const answer = await call('POST', `/datasets/${ds.id}/search`, { query: Array.from(query), top_k: 10, include_metadata: false });
    const querySeconds = (Date.now() - tQuery) / 1000;
    const peakAtReady = memoryOf(pid).peak;
    const searchable = { seconds: (Date.now() - tUp) / 1000, fromCompleteSeconds: (Date.now() - t0) / 1000 };
    const stats = await call('GET', `/datasets/${ds.id}/stats`);
    // The compaction a load leaves behind (a sable dataset's partitions folded into one, up to 4M
    // rows) runs after the index is ready and can hold more memory than the load: watched until
    // one partition is left, at most --settle seconds (default 600).
    const settleLimit = Number(args.settle ?? 600) * 1000;
    const tSettle = Date.now();
    let settled = { partitions: stats.partitions as number, seconds: 0, done: false };
    while (Date.now() - tSettle < settleLimit) {
      const [st, idx] = await Promise.all([call('GET', `/datasets/${ds.id}/stats`), call('GET', `/datasets/${ds.id}/index`)]);
      settled = { partitions: st.partitions, seconds: (Date.now() - t0) / 1000, done: idx.status === 'ready' && st.partitions === 1 };
      if (settled.done) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const mem = memoryOf(pid);
    sable = {
      uploadSeconds,
      load: { seconds: loadSeconds, vectorsPerSecond: job.vectors_inserted / loadSeconds, vectors: job.vectors_inserted as number },
      indexReadySeconds: indexSeconds,
      querySeconds,
      searchableSeconds: searchable.seconds,
      searchableFromCompleteSeconds: searchable.fromCompleteSeconds,
      top1: answer.results[0] ? { id: Number(answer.results[0].id), distance: answer.results[0].score as number } : null,
      strategy: answer.receipt?.strategy as string | undefined,
      partitions: stats.partitions as number,
      indexMemoryBytes: stats.memory_bytes as number,
      rssIdleBytes: rssIdle,
      peakRssBytes: mem.peak,
      peakRssAtReadyBytes: peakAtReady,
      settled,
      finalRssBytes: mem.rss,
    };
  } finally {
    svc.child.kill('SIGTERM');
    await new Promise((r) => svc.child.once('exit', r));
    if (!args.keep) rmSync(dataDir, { recursive: true, force: true });
  }

  // After the service has stopped, so the two never share the cores.
  let lance: LanceResult | null = null;
  if (peerSetup && !peerSetup.skip) {
    say(`LanceDB ${LANCEDB_VERSION}: the same file(s), in its own process...`);
    lance = await runLancedb(files);
    say(`LanceDB searchable in ${lance.searchableSeconds.toFixed(1)} s (write ${lance.writeSeconds.toFixed(1)} s, index ${lance.indexSeconds.toFixed(1)} s), peak RSS ${(lance.peakRssBytes / MB).toFixed(0)} MB`);
  }

  const result = {
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim(),
    date: new Date().toISOString(),
    cpus: cpus().length,
    loadBefore: load0,
    loadAfter: loadavg()[0],
    rows: ROWS,
    dim: DIM,
    files: FILES,
    rowGroupRows: GROUP,
    fileBytes: bytes,
    queryRow: QUERY_ROW,
    decode: { ...ceiling, rowsPerSecond: ceiling.rows / ceiling.seconds, decoder: 'core reader (bench/bulk/decode-native.ts)' },
    decodeWasm: { ...wasm, rowsPerSecond: wasm.rows / wasm.seconds },
    ...sable,
    peer: PEER === 'none' ? null : lance ? { name: 'lancedb', ...lance } : { name: 'lancedb', skipped: peerSetup!.skip },
    peerNotes: peerSetup?.notes ?? [],
  };
  const ratio = result.load.vectorsPerSecond / result.decode.rowsPerSecond;
  const budget = result.indexMemoryBytes + 1024 * MB;
  const s = (x: number) => `${x.toFixed(1)} s`;
  const mb = (x: number) => `${(x / MB).toFixed(0)} MB`;
  const vs = (ours: number, theirs: number) => {
    const r = ours / theirs;
    return { ratio: r.toFixed(2), verdict: r <= 1 ? 'met' : 'NOT MET' };
  };
  const lanceLines: string[] = [];
  if (lance) {
    const time = vs(result.searchableSeconds, lance.searchableSeconds);
    const fromComplete = vs(result.searchableFromCompleteSeconds, lance.searchableSeconds);
    const memory = vs(result.peakRssBytes, lance.peakRssBytes);
    const perGroup = lance.addRows === 0 ? 'one per row group' : `${lance.addRows} rows each`;
    lanceLines.push(
      `| LanceDB ${lance.version}: open the file -> table written (${lance.adds} writes, ${perGroup}) | ${s(lance.writeSeconds)} = ${(lance.rows / lance.writeSeconds).toFixed(0)} vectors/s |`,
      `| LanceDB: IVF_PQ index (${lance.numPartitions} partitions, ${lance.numSubVectors} sub-vectors, cosine) | ${s(lance.indexSeconds)} (${lance.index ? `${lance.index.indexType}, ${lance.index.numIndexedRows} rows indexed, ${lance.index.numUnindexedRows} not` : 'no index stats'}) |`,
      `| LanceDB: one query (row ${QUERY_ROW}'s vector, top 10) | ${(lance.querySeconds * 1000).toFixed(0)} ms (${lance.usedIndex ? 'its plan searches the IVF index' : '**its plan does not name the IVF index**'}) |`,
      `| LanceDB peak RSS (VmHWM of its process) / table on disk | **${mb(lance.peakRssBytes)}** / ${mb(lance.diskBytes)} |`,
      '',
      '## Sable / LanceDB',
      '',
      `Both from the same file(s), one after the other (Sable's service stopped before LanceDB starts). LanceDB ${lance.version} reads the Parquet with parquet-wasm a row group at a time into Apache Arrow 18.1 tables (its Node API takes Arrow tables; it has no Parquet reader of its own) and writes them with \`createTable\`/\`add\` into a fresh directory under bench/.cache/bulk; its index is \`Index.ivfPq\` with LanceDB's own defaults stated (sqrt(n) partitions, dim/16 sub-vectors, 8 bits) and distance cosine, as Sable's dataset; its query uses its default nprobes (20), no refine.`,
      '',
      '| measure | Sable | LanceDB | Sable / LanceDB | target |',
      '|---|---|---|---|---|',
      `| time to searchable (Sable: upload start -> index ready -> one search answered; LanceDB: open the file -> index built -> one query answered) | ${s(result.searchableSeconds)} | ${s(lance.searchableSeconds)} | **${time.ratio}** | <= 1: ${time.verdict} |`,
      `| the same, Sable from upload/complete (the upload left out) | ${s(result.searchableFromCompleteSeconds)} | ${s(lance.searchableSeconds)} | ${fromComplete.ratio} | (informative) |`,
      `| peak RSS (VmHWM; Sable: the service, whole run, the compaction after the load included) | ${mb(result.peakRssBytes)} | ${mb(lance.peakRssBytes)} | **${memory.ratio}** | <= 1: ${memory.verdict} |`,
      `| top-1 for row ${QUERY_ROW}'s vector (sanity) | id ${result.top1?.id ?? 'none'} (${result.strategy ?? '?'}) | id ${lance.top1?.id ?? 'none'} | ${result.top1 && lance.top1 && result.top1.id === lance.top1.id ? 'same' : '**differ**'} | same |`,
    );
  } else if (PEER === 'lancedb') {
    lanceLines.push(`| LanceDB | skipped: ${peerSetup!.skip} |`);
  }
  const md = [
    '# bench:bulk',
    '',
    `\`npm run bench:bulk -- --rows=${ROWS}${FILES > 1 ? ` --files=${FILES}` : ''}${args.file ? ` --file=${args.file}` : ''}${PEER === 'none' ? ' --peer=none' : ''}\` at commit ${result.commit}, ${result.date}; ${result.cpus} cores, load average ${load0.toFixed(2)} before, ${result.loadAfter.toFixed(2)} after.`,
    args.file
      ? `File: ${args.file} (given; ${ROWS.toLocaleString('en')} x ${DIM}), ${(bytes / MB).toFixed(0)} MB.`
      : `${FILES === 1 ? 'File' : `${FILES} files of one job`}: ${ROWS.toLocaleString('en')} x ${DIM} float32 (fixed-size list), int64 id, a string and a float64 column, row groups of ${GROUP} rows, snappy: ${(bytes / MB).toFixed(0)} MB.`,
    'The service runs as `sable serve` on a fresh data directory (durable LMDB); the file goes up through the presigned URL.',
    '',
    '| measure | value |',
    '|---|---|',
    `| decode ceiling: the core's reader alone (what loads use), row group at a time | ${result.decode.rowsPerSecond.toFixed(0)} rows/s (${(bytes / MB / ceiling.seconds).toFixed(0)} MB/s), peak RSS ${(ceiling.peakRssBytes / MB).toFixed(0)} MB |`,
    `| decode: parquet-wasm alone, the same way | ${result.decodeWasm.rowsPerSecond.toFixed(0)} rows/s (${(bytes / MB / wasm.seconds).toFixed(0)} MB/s), peak RSS ${(wasm.peakRssBytes / MB).toFixed(0)} MB; the core's reader ${(result.decode.rowsPerSecond / result.decodeWasm.rowsPerSecond).toFixed(2)}x |`,
    `| upload (PUT to the presigned URL) | ${result.uploadSeconds.toFixed(1)} s (${(bytes / MB / result.uploadSeconds).toFixed(0)} MB/s) |`,
    `| load: upload/complete -> job completed | ${s(result.load.seconds)} = **${result.load.vectorsPerSecond.toFixed(0)} vectors/s** |`,
    `| load / decode ceiling (the core's reader) | **${(ratio * 100).toFixed(0)}%** (target >= 80%) |`,
    `| until every partition's index is built | ${s(result.indexReadySeconds)} (${result.partitions} partitions) |`,
    `| Sable: one search after that (row ${QUERY_ROW}'s vector, top 10) | ${(result.querySeconds * 1000).toFixed(0)} ms (strategy ${result.strategy ?? '?'}) |`,
    `| Sable time to searchable: upload start -> that search answered | ${s(result.searchableSeconds)} (${s(result.searchableFromCompleteSeconds)} from upload/complete) |`,
    `| dataset index memory (stats memory_bytes) | ${mb(result.indexMemoryBytes)} |`,
    `| compaction after the load: partitions when the index was ready -> after | ${result.partitions} -> ${result.settled.partitions} (${result.settled.done ? `settled ${s(result.settled.seconds)} after upload/complete` : `not one partition after --settle=${args.settle ?? 600} s`}) |`,
    `| service peak RSS (VmHWM) until the index was ready / whole run, compaction included | ${mb(result.peakRssAtReadyBytes)} / **${mb(result.peakRssBytes)}** (budget: index + 1 GiB = ${mb(budget)}; ${result.peakRssBytes <= budget ? 'within' : 'OVER'}) |`,
    `| service RSS idle before the upload / at the end | ${mb(result.rssIdleBytes)} / ${mb(result.finalRssBytes)} |`,
    ...lanceLines,
    ...(result.peerNotes.length ? ['', ...result.peerNotes.map((n) => `- ${n}`)] : []),
    '',
  ].join('\n');
  mkdirSync(paths.results, { recursive: true });
  const name = args.out ?? 'bulk';
  writeFileSync(join(paths.results, `${name}.md`), md);
  writeFileSync(join(paths.results, `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(md);
}

await main();
