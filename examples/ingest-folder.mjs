// Ingests a folder of documents (PDF, DOCX, XLSX, HTML, Markdown, text, CSV, source code) into a
// dataset through a file_upload source, then asks a question over them: upload/init gives one
// presigned URL per file, each file is PUT to its URL (no API key), upload/complete starts the
// job, and the job is polled with a progress line. The source syncs incrementally: run it again
// on the same folder and unchanged files are skipped. With no folder, a small demo folder is
// written to the OS temp directory and removed after.
//
//   npm start                                              # in another terminal: the service on :8080
//   node examples/ingest-folder.mjs [FOLDER] ["question"]
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join, relative, resolve } from 'node:path';
import { api } from './sable.mjs';

const TYPES = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.html': 'text/html', '.htm': 'text/html', '.md': 'text/markdown', '.txt': 'text/plain', '.csv': 'text/csv',
};
const MAX_FILES_PER_JOB = 1000;

const [folderArg, question = 'How many steps does the lighthouse keeper climb?'] = process.argv.slice(2);
const demo = !folderArg;
const folder = resolve(folderArg ?? mkdtempSync(join(tmpdir(), 'sable-folder-')));
if (demo) {
  writeFileSync(join(folder, 'lighthouse.md'), '# The lighthouse\n\nThe keeper climbs 217 steps every evening to light the lamp.\n\n## Storms\n\nIn a storm the lamp burns all night.\n');
  writeFileSync(join(folder, 'bees.txt'), 'A honey bee visits between fifty and one hundred flowers on each trip out of the hive.');
  writeFileSync(join(folder, 'crew.csv'), 'name,role\nMara,keeper\nOwen,engineer\n');
  console.log(`wrote a demo folder: ${folder}`);
}

/** Every file under `dir` (dot files and folders left out). */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

/** The folder's non-empty files with their names (paths below the folder) and media types by extension. */
function filesOf(dir) {
  return walk(dir)
    .map((path) => ({ path, name: relative(dir, path), size: statSync(path).size, type: TYPES[extname(path).toLowerCase()] ?? 'text/plain' }))
    .filter((f) => f.size > 0);
}

/** The first item of a list route named `name`, or what `create` makes. */
async function named(listPath, key, name, create) {
  const found = (await api('GET', `${listPath}?limit=200`))[key].find((x) => x.name === name);
  return found ?? create();
}

try {
  const files = filesOf(folder);
  if (files.length === 0) throw new Error(`no files in ${folder}`);
  const name = `folder-${basename(folder)}`.slice(0, 200);
  const ds = await named('/datasets', 'datasets', name, () => api('POST', '/datasets', { name, hybrid: true }));
  const source = await named('/ingestion/sources', 'sources', folder, () =>
    api('POST', '/ingestion/sources', { source_type: 'file_upload', name: folder, config: { sync_mode: 'incremental' } }));
  console.log(`dataset ${ds.name} (${ds.id}), source ${source.id}: ${files.length} file(s)`);

  const totals = { ingested: 0, unchanged: 0, failed: [] };
  for (let at = 0; at < files.length; at += MAX_FILES_PER_JOB) {
    const batch = files.slice(at, at + MAX_FILES_PER_JOB);
    const init = await api('POST', `/ingestion/sources/${source.id}/upload/init`, {
      dataset_id: ds.id,
      files: batch.map((f) => ({ name: f.name, size_bytes: f.size, content_type: f.type })),
    });
    for (const [i, u] of init.uploads.entries()) {
      const put = await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': batch[i].type }, body: readFileSync(batch[i].path) });
      if (put.status !== 200) throw new Error(`uploading ${batch[i].name} answered ${put.status}: ${await put.text()}`);
    }
    await api('POST', `/ingestion/sources/${source.id}/upload/complete`, { job_id: init.job_id, file_ids: init.uploads.map((u) => u.file_id) });

    let job;
    for (;;) {
      job = await api('GET', `/ingestion/jobs/${init.job_id}`);
      const line = `${job.status}: ${job.progress_percentage}% ${job.current_step ?? ''}`.trim();
      if (process.stdout.isTTY) process.stdout.write(`\r${line}\x1b[K`);
      if (job.status === 'completed' || job.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 300));
    }
    if (process.stdout.isTTY) process.stdout.write('\r\x1b[K');
    console.log(`job ${job.job_id} ${job.status}: ${job.message}`);
    const { files: done } = await api('GET', `/ingestion/jobs/${job.job_id}/files?limit=200&status=failed`);
    totals.failed.push(...done);
    const stats = await api('GET', `/ingestion/jobs/${job.job_id}/statistics`);
    totals.ingested += stats?.files_processed ?? 0;
    totals.unchanged += stats?.files_skipped ?? 0;
  }
  for (const f of totals.failed) console.log(`  failed ${f.file_name}: ${f.error_type}: ${f.error_message}`);
  console.log(`${totals.ingested} ingested, ${totals.unchanged} unchanged, ${totals.failed.length} failed`);

  const { results } = await api('POST', `/datasets/${ds.id}/search`, { query_text: question, top_k: 3, include_documents: true });
  console.log(`\n${question}`);
  for (const r of results) console.log(`  ${r.score.toFixed(3)}  ${r.metadata.name}${r.metadata.page ? ` p.${r.metadata.page}` : ''}: ${r.doc_value.replace(/\s+/g, ' ').slice(0, 110)}`);
} catch (e) {
  console.error(e.message);
  process.exitCode = 1;
} finally {
  if (demo) rmSync(folder, { recursive: true, force: true });
}
