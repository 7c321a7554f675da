/**
 * Uploaded bytes in `<data dir>/uploads`. Presigned URLs point at the service itself
 * (`PUT /uploads/{token}`); bytes stream to a `.part` file renamed into place only when the
 * size matches, so a half upload never looks complete.
 */
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { SizeMismatch, type ByteLimit, type ObjectStore, type StagedFile, type UploadTarget } from './object-store.js';
import type { UploadSigner } from './signer.js';

export class LocalObjectStore implements ObjectStore {
  readonly kind = 'local' as const;
  private readonly root: string;

  constructor(dataDir: string, private readonly signer: UploadSigner) {
    this.root = resolve(dataDir, 'uploads');
  }

  presignPut(target: UploadTarget, uploadBase: string): string {
    return `${uploadBase}/uploads/${this.signer.sign(target)}`;
  }

  async put(key: string, stream: Readable, size: ByteLimit): Promise<number> {
    const max = 'exact' in size ? size.exact : size.max;
    const file = this.pathOf(key);
    const part = `${file}.part`;
    await mkdir(dirname(file), { recursive: true });
    let received = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        received += chunk.length;
        if (received > max) done(new SizeMismatch(received, size));
        else done(null, chunk);
      },
    });
    try {
      await pipeline(stream, counter, createWriteStream(part));
      if ('exact' in size && received !== size.exact) throw new SizeMismatch(received, size);
      await rename(part, file);
      return received;
    } catch (e) {
      await rm(part, { force: true });
      throw e;
    }
  }

  async putFile(key: string, path: string, size: number): Promise<void> {
    const actual = (await stat(path)).size;
    if (actual !== size) throw new SizeMismatch(actual, { exact: size });
    const file = this.pathOf(key);
    const part = `${file}.part`;
    await mkdir(dirname(file), { recursive: true });
    await rm(part, { force: true });
    try {
      // A hard link costs no copy; another file system (or one without links) gets a copy, cloned where it can be.
      await link(path, part).catch(() => copyFile(path, part, constants.COPYFILE_FICLONE));
      await rename(part, file);
    } catch (e) {
      await rm(part, { force: true });
      throw e;
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch {
      return null;
    }
  }

  async stage(key: string): Promise<StagedFile> {
    return { path: this.pathOf(key), release: async () => {} };
  }

  async download(key: string): Promise<{ stream: Readable; size: number } | null> {
    const size = await this.size(key);
    return size === null ? null : { stream: createReadStream(this.pathOf(key)), size };
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  private pathOf(key: string): string {
    const file = resolve(this.root, key);
    if (!file.startsWith(this.root + sep)) throw new Error(`storage key escapes the upload directory: ${key}`);
    return file;
  }
}
