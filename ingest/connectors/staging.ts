/**
 * Where connectors put an item's bytes for the parser: a file in the staging directory, written
 * from the source's stream with a byte bound (a source that sends more than it listed, or more
 * than the source's size limit, is cut off), removed on release.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileError } from '../../errors/job-errors.js';
import type { StagedFile } from '../../objects/object-store.js';

export async function stageStream(source: Readable, dir: string, maxBytes: number, signal?: AbortSignal): Promise<StagedFile> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, randomUUID());
  let received = 0;
  const bound = new Transform({
    transform(chunk: Buffer, _e, done) {
      received += chunk.length;
      done(received > maxBytes ? new FileError('file_too_large', `the source sent more than ${maxBytes} bytes`) : null, chunk);
    },
  });
  try {
    await pipeline(source, bound, createWriteStream(path), { signal });
  } catch (e) {
    await rm(path, { force: true });
    throw e;
  }
  return { path, release: () => rm(path, { force: true }) };
}

/** Bytes already in memory (a page read while crawling, a document composed from an API's answers). */
export async function stageBytes(bytes: Uint8Array, dir: string): Promise<StagedFile> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, randomUUID());
  await writeFile(path, bytes);
  return { path, release: () => rm(path, { force: true }) };
}
