// Loads a Parquet file of vectors into a Sable dataset through the bulk-upload API:
// create the dataset, upload/init, PUT the bytes to the presigned URL, upload/complete, poll
// the job. With no file given, writes a demo file of 10,000 random 384-d vectors first.
//
//   npm start                                   # in another terminal: the service on :8080
//   node examples/bulk-load.mjs [file.parquet] [dim]
//
// SABLE_URL (default http://127.0.0.1:8080) and SABLE_API_KEY (default: .sable-data/admin.key).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { parquetBytes } from '../dist/bench/bulk/parquet-writer.js';

const url = process.env.SABLE_URL ?? 'http://127.0.0.1:8080';
const key = process.env.SABLE_API_KEY ?? readFileSync('.sable-data/admin.key', 'utf8').trim();
let [file, dim] = [process.argv[2], Number(process.argv[3] ?? 384)];

if (!file) {
  file = 'demo-vectors.parquet';
  const n = 10_000;
  const vectors = Float32Array.from({ length: n * dim }, () => Math.random() - 0.5);
  const ids = BigInt64Array.from({ length: n }, (_, i) => BigInt(i));
  const topic = Array.from({ length: n }, (_, i) => ['news', 'docs', 'code'][i % 3]);
  writeFileSync(file, parquetBytes([{ ids, vectors, dim, metadata: { topic } }]));
  console.log(`wrote ${file}: ${n} x ${dim} (columns id, embedding, topic)`);
}

const api = async (method, path, body) => {
  const res = await fetch(url + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const out = res.status === 204 ? null : await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
  return out;
};

const ds = await api('POST', '/datasets', { name: `bulk-${Date.now()}`, dim, metric: 'cosine' });
const size = statSync(file).size;
const init = await api('POST', `/v1/datasets/${ds.id}/upload/init`, {
  files: [{ name: file, size_bytes: size, content_type: 'application/vnd.apache.parquet' }],
});
// The presigned URL authenticates itself: no API key; the same Content-Type as at init.
const put = await fetch(init.uploads[0].upload_url, {
  method: 'PUT',
  headers: { 'content-type': 'application/vnd.apache.parquet' },
  body: readFileSync(file),
});
if (put.status !== 200) throw new Error(`PUT ${put.status}: ${await put.text()}`);
console.log(await api('POST', `/v1/datasets/${ds.id}/upload/complete`, { job_id: init.job_id, file_ids: [init.uploads[0].file_id] }));
for (;;) {
  const job = await api('GET', `/v1/jobs/${init.job_id}`);
  console.log(`${job.status} ${job.progress_percentage}% ${job.current_step ?? ''}`);
  if (job.status === 'completed' || job.status === 'failed') {
    console.log(JSON.stringify(job, null, 2));
    break;
  }
  await new Promise((r) => setTimeout(r, 500));
}
console.log((await api('GET', `/ingestion/jobs/${init.job_id}/files`)).files.map((f) => `${f.file_name}: ${f.status} (${f.status_reason})`).join('\n'));
