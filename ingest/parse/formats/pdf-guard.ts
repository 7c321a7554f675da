/**
 * PDF streams are compressed, and pdfjs inflates whatever a file holds into memory that the parse
 * thread's heap limit does not count (a 4 MB file of zeros took the service to 8.5 GB). Before
 * pdfjs reads a file, its Flate streams are inflated here against a budget, images aside (the
 * text extraction never decodes them), and a file past it is refused as a bomb.
 */
import { constants, inflateSync } from 'node:zlib';
import { ParseError } from '../document.js';

const MAX_INFLATED = 256 * 1024 * 1024;

export function checkPdfStreams(bytes: Uint8Array): void {
  const pdf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let left = MAX_INFLATED;
  let at = 0;
  for (;;) {
    const keyword = pdf.indexOf('stream', at, 'latin1');
    if (keyword < 0) return;
    at = keyword + 6;
    let start = at;
    if (pdf[start] === 0x0d) start++;
    if (pdf[start] === 0x0a) start++;
    // `endstream`, or the word inside some text: not the start of a stream's data.
    if (start === at || pdf.toString('latin1', keyword - 3, keyword) === 'end') continue;
    const object = pdf.lastIndexOf(' obj', keyword, 'latin1');
    const dict = pdf.toString('latin1', object < 0 ? Math.max(0, keyword - 4096) : object, keyword);
    if (!/\/FlateDecode\b|\/Fl\b/.test(dict) || /\/Subtype\s*\/Image\b/.test(dict)) continue;
    const end = pdf.indexOf('endstream', start, 'latin1');
    if (end < 0) return;
    try {
      left -= inflateSync(pdf.subarray(start, end), { maxOutputLength: left + 1, finishFlush: constants.Z_SYNC_FLUSH }).length;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new ParseError('zip_bomb', `the PDF's compressed streams expand past ${MAX_INFLATED / 2 ** 20} MiB`);
      }
      // Encrypted, filtered by something else first, or damaged: pdfjs decides.
    }
    at = end + 9;
  }
}
