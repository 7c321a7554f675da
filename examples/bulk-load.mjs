// Loads a Parquet file of vectors into a new dataset through the bulk-upload API: upload/init,
// PUT the bytes to the presigned URL (no API key: the URL authenticates itself), upload/complete,
// then the job is polled with a progress line. With no file given, it first writes a demo file of
// random 384-d vectors (an `id`, an `embedding` and a `topic` column) to the OS temp directory.
//
//   npm start                                          # in another terminal: the service on :8080
//   node examples/bulk-load.mjs [file.parquet [dim]]   # --rows N: demo rows (default 10000)
//   node examples/bulk-load.mjs --write-only out.parquet   # just write the demo file
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const rows = Number(option('rows') ?? 10_000);
const writeOnly = option('write-only');
let [file, dim] = [args[0], Number(args[1] ?? 384)];

/** A Parquet file of `n` random vectors: id (int64), embedding (fixed-size list of float32), topic. */
function writeDemo(path, n) {
  const vectors = Float32Array.from({ length: n * dim }, () => Math.random() - 0.5);
  const item = new arrow.Field('item', new arrow.Float32(), false);
  const embedding = arrow.makeVector(arrow.makeData({
    type: new arrow.FixedSizeList(dim, item), length: n, nullCount: 0,
    child: arrow.makeData({ type: new arrow.Float32(), length: n * dim, nullCount: 0, data: vectors }),
  }));
  const table = new arrow.Table({
    id: arrow.makeVector(BigInt64Array.from({ length: n }, (_, i) => BigInt(i))),
    embedding,
    topic: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => ['news', 'docs', 'code'][i % 3]), new arrow.Utf8()),
  });
  const props = new pq.WriterPropertiesBuilder().setMaxRowGroupSize(5000).build();
  writeFileSync(path, pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props));
  console.log(`wrote ${path}: ${n} x ${dim} (columns id, embedding, topic)`);
}

if (writeOnly) {
  writeDemo(writeOnly, rows);
  process.exit(0);
}

const { api } = await import('./sable.mjs');
const demo = !file;
if (demo) writeDemo((file = join(tmpdir(), `sable-demo-${randomUUID()}.parquet`)), rows);
try {
  const ds = await api('POST', '/datasets', { name: `bulk-${Date.now()}`, dim, metric: 'cosine' });
  const size = statSync(file).size;
  const init = await api('POST', `/v1/datasets/${ds.id}/upload/init`, {
    files: [{ name: file.split('/').pop(), size_bytes: size, content_type: 'application/vnd.apache.parquet' }],
  });
  const put = await fetch(init.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': 'application/vnd.apache.parquet' }, body: readFileSync(file) });
  if (put.status !== 200) throw new Error(`the upload answered ${put.status}: ${await put.text()}`);
  await api('POST', `/v1/datasets/${ds.id}/upload/complete`, { job_id: init.job_id, file_ids: [init.uploads[0].file_id] });
  console.log(`dataset ${ds.id}: job ${init.job_id} loads ${(size / 2 ** 20).toFixed(1)} MB`);

  const t0 = Date.now();
  let job;
  for (;;) {
    job = await api('GET', `/v1/jobs/${init.job_id}`);
    const { files } = await api('GET', `/ingestion/jobs/${init.job_id}/files`);
    const loaded = files.reduce((s, f) => s + f.vectors_inserted, 0);
    const seconds = (Date.now() - t0) / 1000;
    const pct = job.progress_percentage;
    const eta = pct > 0 && pct < 100 ? `, ETA ${((seconds * (100 - pct)) / pct).toFixed(1)} s` : '';
    const line = `${job.status}: ${loaded.toLocaleString('en')} vectors (${pct}%), ${Math.round(loaded / Math.max(seconds, 0.001)).toLocaleString('en')} vectors/s${eta}`;
    if (process.stdout.isTTY) process.stdout.write(`\r${line}\x1b[K`);
    else console.log(line);
    if (job.status === 'completed' || job.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (process.stdout.isTTY) process.stdout.write('\n');
  if (job.status === 'failed') throw new Error(`the job failed: ${job.error_details?.type}: ${job.error_details?.message}`);
  const hit = await api('POST', `/datasets/${ds.id}/search`, { query: Array.from({ length: dim }, () => Math.random() - 0.5), top_k: 1 });
  console.log(`${job.vectors_inserted} vectors loaded in ${job.processing_time_seconds.toFixed(1)} s; a random query's nearest: id ${hit.results[0].id} (${JSON.stringify(hit.results[0].metadata)})`);
} finally {
  if (demo) rmSync(file, { force: true });
}
