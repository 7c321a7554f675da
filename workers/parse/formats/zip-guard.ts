/**
 * Office files are zip archives: before a parser inflates one, its central directory is read
 * (sizes only, nothing inflated) and an archive that would expand past a bound, or by a ratio no
 * document has, is refused as a zip bomb. What an archive hides from its directory is bounded by
 * the parse worker's memory limit and time bound.
 */
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
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
}
