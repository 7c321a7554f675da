/**
 * Office files are zip archives: before a parser inflates one, its central directory is read and
 * an archive that would expand past a bound, or by a ratio no document has, is refused as a zip
 * bomb; so is an entry whose data inflates past the size the directory declares for it (each
 * entry is inflated here up to that size and no further).
 */
import { inflateRawSync } from 'node:zlib';
import { ParseError } from '../document.js';

const MAX_UNCOMPRESSED = 512 * 1024 * 1024;
const MAX_ENTRIES = 20_000;
const MAX_RATIO = 200;

export function checkZip(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ParseError('corrupt_file', 'the file is not a valid zip archive (no central directory)');
  const entries = view.getUint16(eocd + 10, true);
  let at = view.getUint32(eocd + 16, true);
  if (entries > MAX_ENTRIES) throw new ParseError('zip_bomb', `the archive holds ${entries} entries`);
  let total = 0;
  for (let e = 0; e < entries; e++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) throw new ParseError('corrupt_file', 'the zip central directory is damaged');
    const compressed = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    if (size === 0xffffffff || compressed === 0xffffffff) throw new ParseError('zip_bomb', 'the archive declares an entry of 4 GiB or more');
    total += size;
    if (total > MAX_UNCOMPRESSED) throw new ParseError('zip_bomb', `the archive expands past ${MAX_UNCOMPRESSED / 2 ** 20} MiB`);
    if (size > 1024 * 1024 && size > compressed * MAX_RATIO) throw new ParseError('zip_bomb', `an entry expands ${Math.round(size / Math.max(compressed, 1))} times`);
    if (view.getUint16(at + 10, true) === DEFLATE) checkInflated(bytes, view, view.getUint32(at + 42, true), compressed, size);
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
}

const DEFLATE = 8;

/**
 * The directory's sizes are the archive's word: an entry whose data inflates past the size it
 * declares (a few bytes declared, gigabytes of zeros inside) is a bomb the checks above cannot
 * see. Inflating stops one byte past the declared size, so this holds at most that much.
 * Data that cannot be found or inflated is left for the parser to refuse.
 */
function checkInflated(bytes: Uint8Array, view: DataView, local: number, compressed: number, size: number): void {
  if (local + 30 > bytes.length || view.getUint32(local, true) !== 0x04034b50) return;
  const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
  if (start + compressed > bytes.length) return;
  try {
    inflateRawSync(bytes.subarray(start, start + compressed), { maxOutputLength: size + 1 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new ParseError('zip_bomb', `an entry inflates past the ${size} bytes the archive declares for it`);
  }
}
