/**
 * One file of an ingest job, from its job file to its catalog document: the source's size limit,
 * the incremental skips (the same version, then the same bytes), fetch and hash, parse and chunk
 * on the parse pool, the chunks indexed and the old version's tail deleted, the document ready.
 * The file has a time bound; whatever fails ends it failed with a typed reason and takes its
 * document out of search.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { DocumentRecord } from '../../catalog/documents/store.js';
import { FileError } from '../../errors/job-errors.js';
import type { FileRecord } from '../../jobs/records.js';
import { Interrupted } from '../../jobs/runner.js';
import type { StagedFile } from '../../objects/object-store.js';
import type { Selectors } from '../parse/formats/html.js';
import type { ParseResult } from '../parse/parse-worker.js';
import { chunkingFor } from './budget.js';
import { deleteChunks, indexChunks } from './chunk-writes.js';
import { failDocument } from './document-failure.js';
import { fetchFailure, fileFailure } from './file-errors.js';
import { fileCompleted, fileFailed, fileSkipped, fileStarted } from './job-files.js';
import type { Run } from './run.js';

export async function processFile(run: Run, file: FileRecord, position: string): Promise<void> {
  const { deps, opts, job, record, connector, source } = run;
  const fileT0 = Date.now();
  const itemId = file.item?.id ?? file.file_name;
  await fileStarted(run, file, position);
  const bound = AbortSignal.timeout(opts.fileTimeoutMs);
  const stopped = () => run.ctx.stopping() || bound.aborted;
  let staged: StagedFile | undefined;
  let doc: DocumentRecord | undefined;
  const existing = deps.documents.byItem(record.id, source.id, itemId);
  const fresh = () =>
    deps.documents.fresh({
      dataset_id: record.id, org_id: job.org_id, source_id: source.id, source_type: source.type, item_id: itemId,
      name: file.file_name, path: file.file_path, url: file.item?.url ?? null, content_type: file.content_type, size_bytes: file.file_size_bytes,
    });
  try {
    const maxBytes = connector.maxBytes(run.cctx.config);
    if (file.file_size_bytes > maxBytes) {
      const why = `${file.file_size_bytes} bytes; this source's limit is ${maxBytes}`;
      if (connector.oversize === 'skip') return await fileSkipped(run, file, null, fileT0, `file_too_large: ${why}`);
      throw new FileError('file_too_large', why);
    }
    const version = file.item?.version ?? null;
    if (run.incremental && existing?.status === 'ready' && version !== null && existing.version === version) {
      return await fileSkipped(run, file, existing, fileT0, 'unchanged (the source reports the same version)');
    }
    const t = Date.now();
    staged = await connector.fetch({ ...run.cctx, signal: AbortSignal.any([run.cctx.signal, bound]) }, file).catch((e: unknown) => {
      throw fetchFailure(e, bound.aborted);
    });
    const hash = await sha256(staged.path);
    deps.observe?.('fetch', Date.now() - t, 1);
    if (run.incremental && existing?.status === 'ready' && existing.content_hash === hash) {
      return await fileSkipped(run, file, existing, fileT0, 'unchanged (same content)');
    }
    // Only an attempt that still holds the job begins a document: one paused past its lease
    // would begin a second document of the item beside the newer attempt's.
    if (run.ctx.stopping()) throw new Interrupted();
    doc = await deps.documents.begin(existing ?? fresh(), { job_id: job.job_id, size_bytes: file.file_size_bytes, content_type: file.content_type, url: file.item?.url });
    const parsed = await parse(run, file, staged, maxBytes, fileT0);
    doc = await deps.documents.bound(doc, parsed.chunks.length);
    const tokens = await indexChunks(run, doc, parsed.chunks, stopped);
    await deleteChunks(deps.writes, record, doc, parsed.chunks.length);
    const { title, format, pages } = parsed;
    await deps.documents.ready(doc, { title, format, content_hash: hash, version, chunk_count: parsed.chunks.length, tokens, pages, storage_key: originalKey(run, file) });
    await fileCompleted(run, file, doc, { chunks: parsed.chunks.length, format, pages }, fileT0);
  } catch (e) {
    if (e instanceof Interrupted && !bound.aborted) throw e;
    // An attempt that outlived its lease fails nothing: the document is the newer attempt's now.
    if (run.ctx.lapsed()) throw new Interrupted();
    const err = fileFailure(e, bound.aborted, opts.fileTimeoutMs, `job ${job.job_id} file ${file.file_name}`);
    // Before parsing (the size check, fetching), a document already in the catalog stays as it
    // is: a source that fails to answer once does not take its content out of search. A new
    // one is cataloged as failed.
    if (!doc && !existing) doc = { ...fresh(), job_id: job.job_id };
    // The original stays downloadable where the source retains it (to see what was wrong with it).
    if (doc) await failDocument(deps, record, doc, err, originalKey(run, file));
    await fileFailed(run, file, err, doc, fileT0);
  } finally {
    await staged?.release();
  }
}

/** Parses and chunks the staged bytes on the parse pool, within what is left of the file's time. */
async function parse(run: Run, file: FileRecord, staged: StagedFile, maxBytes: number, fileT0: number): Promise<Extract<ParseResult, { ok: true }>> {
  const { deps, opts } = run;
  const parsed = await deps.parse.parse(
    { path: staged.path, name: file.file_name, contentType: file.content_type, maxBytes, selectors: run.cctx.config.selectors as Selectors | undefined, chunking: chunkingFor(run.record.embedding.provider) },
    Math.min(opts.parseTimeoutMs, Math.max(1, opts.fileTimeoutMs - (Date.now() - fileT0))),
  );
  if (!parsed.ok) throw new FileError(parsed.type, parsed.message);
  deps.observe?.('parse', parsed.parseMs, 1);
  deps.observe?.('chunk', parsed.chunkMs, parsed.chunks.length);
  return parsed;
}

/** Where the original stays downloadable: only where the source retains it. */
function originalKey(run: Run, file: FileRecord): string | null {
  return run.connector.retainsOriginals ? (file.storage_key ?? file.item?.version ?? null) : null;
}

function sha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}
