// An ingestion job when the service dies under it: `sable serve` is killed (SIGKILL) in the
// middle of a job of many files, started again on the same data directory, and the job resumes
// and ends completed: every file ends in a terminal state, none stays processing, every
// document is in the catalog once and its chunks are in the index once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prose } from '../support/documents.js';
import { ingestClient } from '../support/ingest.js';
import { adminKey, serve, type Served } from '../support/serve.js';

const FILES = 30;

describe('an ingestion job across a kill -9', () => {
  let dir: string;
  let served: Served;
  const api = ingestClient(() => served.url, () => adminKey(dir));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-ingest-kill-'));
    served = await serve(dir);
  });
  afterAll(async () => {
    await served.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('resumes the job on the next start and ends with every document indexed once', async () => {
    const ds = await api.dataset('resumed');
    const src = await api.source('resumed');
    const files = Array.from({ length: FILES }, (_, i) => ({ name: `doc-${i}.md`, type: 'text/markdown', bytes: `# Document ${i}\n\n${prose(12, i + 1)}` }));
    const jobId = await api.send(src, ds, files);
    // Kill it once some files are done and others are not.
    let atKill: any;
    for (let i = 0; ; i++) {
      const j = (await api.call('GET', `/ingestion/jobs/${jobId}`)).body;
      atKill = j;
      if (j.documents_processed >= 3) break;
      if (j.status !== 'pending' && j.status !== 'running') throw new Error(`the job ended before it could be interrupted: ${j.message}`);
      if (i > 2000) throw new Error('the job made no progress');
      await new Promise((r) => setTimeout(r, 10));
    }
    await served.stop('SIGKILL');
    expect(atKill.status).toBe('running');
    expect(atKill.documents_processed).toBeLessThan(FILES);
    served = await serve(dir);

    const job = await api.job(jobId);
    expect(job.status).toBe('completed');
    expect(job.documents_processed).toBe(FILES);
    const listed = await api.files(jobId);
    expect(listed.counts).toEqual({ pending: 0, processing: 0, completed: FILES, failed: 0, skipped: 0 });
    const docs = await api.documents(ds);
    expect(docs).toHaveLength(FILES);
    expect(new Set(docs.map((d) => d.name)).size).toBe(FILES);
    for (const d of docs) expect(d.status).toBe('ready');
    // Chunks are keyed by document and index: a file processed twice overwrote its own chunks.
    const chunks = docs.reduce((s, d) => s + d.chunk_count, 0);
    expect(await api.count(ds)).toBe(chunks);
    expect(job.vectors_inserted).toBeGreaterThanOrEqual(chunks);
    const [hit] = await api.search(ds, 'Document 17', { top_k: 1, filters: { name: 'doc-17.md' } });
    expect(hit.doc_value).toContain('Document 17');
  });
});
