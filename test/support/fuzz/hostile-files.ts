// Broken and hostile files, made in the test (no binary fixtures): Parquet files cut short, with
// flipped bytes or with footers whose fields say impossible things; PDFs that end early or lie
// about their streams; DOCX and XLSX files that are no zip, or zips that expand to gigabytes
// (declared in the directory, or hidden from it); and the names such files may be uploaded under.
import { constants, crc32, deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { parquetBytes } from '../../../dist/testkit/parquet-writer.js';
import { Reader, Writer } from '../../../dist/bulk/parquet/thrift-compact.js';
import { pdfOf, rawZip, zipBomb, zipOf, type RawEntry } from '../documents.js';

export interface HostileFile {
  label: string;
  name: string;
  type: string;
  bytes: Uint8Array;
  /** The error_type its file must fail with, where only one is right. */
  expect?: string;
}

export const PARQUET = 'application/vnd.apache.parquet';
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const enc = new TextEncoder();

/** A well-formed Parquet file of `rows` vectors of `dim` (ids from 1), to be broken. */
export function validParquet(rows: number, dim: number): Uint8Array {
  const vectors = Float32Array.from({ length: rows * dim }, (_, i) => Math.sin(i));
  return parquetBytes([{ ids: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i + 1)), vectors, dim }], { rowGroupRows: Math.max(1, rows >> 1) });
}

/** `PAR1` + `footer` + its length + `PAR1`: a file that is nothing but a (hostile) footer. */
function footerOnly(footer: Uint8Array, declared = footer.length): Uint8Array {
  const len = Buffer.alloc(4);
  len.writeUInt32LE(declared >>> 0);
  return Buffer.concat([Buffer.from('PAR1'), footer, len, Buffer.from('PAR1')]);
}

function varint(n: bigint): number[] {
  const out: number[] = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n > 0n) b |= 0x80;
    out.push(b);
  } while (n > 0n);
  return out;
}

/** The footer of a Parquet file, its start and its length. */
function footerOf(file: Uint8Array): { start: number; length: number } {
  const length = Buffer.from(file).readUInt32LE(file.length - 8);
  return { start: file.length - 8 - length, length };
}

/**
 * Parquet files for the bulk routes, from a valid one: fixed hostile shapes first, then
 * `random` generated ones (cuts, flipped bytes, footer fields set to extreme values).
 */
export function hostileParquet(dim: number, random: number, seed: number): HostileFile[] {
  const good = validParquet(40, dim);
  const { start, length } = footerOf(good);
  const file = (label: string, bytes: Uint8Array): HostileFile => ({ label, name: `${label}.parquet`, type: PARQUET, bytes });
  const fixed: HostileFile[] = [
    file('empty-magic', enc.encode('PAR1PAR1')),
    file('not-parquet', enc.encode('id,embedding\n1,"[1,2]"\n')),
    file('footer-length-4gib', footerOnly(new Uint8Array(8), 0xffffffff)),
    file('footer-length-past-start', footerOnly(good.subarray(start, start + length), length + 100)),
    // A map of 2^48 booleans: compact Thrift writes each boolean of a collection as a byte.
    file('footer-map-of-2^48-booleans', footerOnly(Uint8Array.from([0x1b, ...varint(2n ** 48n), 0x11, 0]))),
    file('footer-list-of-2^40-structs', footerOnly(Uint8Array.from([0x19, 0xfc, ...varint(2n ** 40n), 0]))),
    file('footer-nested-100k-structs', footerOnly(Uint8Array.from({ length: 100_000 }, () => 0x1c))),
    file('footer-garbage', footerOnly(Uint8Array.from({ length: 64 }, (_, i) => (i * 97 + 13) & 0xff))),
    file('truncated-half', good.subarray(0, good.length >> 1)),
    file('no-tail-magic', good.subarray(0, good.length - 4)),
    file('rows-2^62', withFooterField(good, [4, 0, 3], 2n ** 62n)),
    file('num-rows-negative', withFooterField(good, [3], -5n)),
    file('chunk-offset-past-end', withChunkField(good, 9, BigInt(good.length) * 1000n)),
    file('chunk-size-negative', withChunkField(good, 7, -1n)),
  ];
  const generated = fc.sample(
    fc.oneof(
      fc.integer({ min: 1, max: good.length - 1 }).map((at) => file(`cut-at-${at}`, good.subarray(0, at))),
      fc.array(fc.tuple(fc.nat({ max: good.length - 1 }), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => {
        const b = Uint8Array.from(good);
        for (const [at, x] of flips) b[at] ^= x;
        return file(`flip-${flips.map(([a]) => a).join('-')}`, b);
      }),
      fc.tuple(fc.nat({ max: length - 1 }), fc.integer({ min: 1, max: 255 })).map(([at, x]) => {
        const b = Uint8Array.from(good);
        b[start + at] ^= x;
        return file(`footer-flip-${at}`, b);
      }),
      fc.tuple(fc.nat(), fc.constantFrom(0n, -1n, 2n ** 31n, 2n ** 32n + 7n, 2n ** 62n, -(2n ** 62n))).map(([pick, v]) => {
        const paths = numericPaths(good);
        const path = paths[pick % paths.length];
        return file(`footer-field-${path.join('.')}=${v}`, withFooterField(good, path, v));
      }),
    ),
    { seed, numRuns: random },
  );
  return [...fixed, ...generated];
}

type Node = Map<number, { type: number; value: unknown }>;

/** Paths (field ids, list indexes) of the footer's integer fields. */
function numericPaths(file: Uint8Array): number[][] {
  const { start, length } = footerOf(file);
  const out: number[][] = [];
  const walk = (v: unknown, at: number[]) => {
    if (v instanceof Map) for (const [id, f] of v as Node) (typeof f.value === 'number' || typeof f.value === 'bigint' ? out.push([...at, id]) : walk(f.value, [...at, id]));
    else if (v && typeof v === 'object' && (v as { kind?: string }).kind === 'list') (v as { items: unknown[] }).items.forEach((x, i) => walk(x, [...at, i]));
  };
  walk(new Reader(file.subarray(start, start + length)).struct(), []);
  return out;
}

/** The file with one footer field (a path of field ids and list indexes) set to `value`. */
function withFooterField(file: Uint8Array, path: number[], value: bigint): Uint8Array {
  const { start, length } = footerOf(file);
  const meta = new Reader(file.subarray(start, start + length)).struct() as Node;
  let node: any = meta;
  for (let i = 0; i < path.length - 1; i++) node = node instanceof Map ? node.get(path[i]).value : node.items[path[i]];
  const last = path.at(-1)!;
  const field = node.get(last);
  // Thrift's i32 fields hold what fits an i32; other integers are i64.
  node.set(last, field && field.type !== 6 ? { type: field.type, value: Number(BigInt.asIntN(32, value)) } : { type: 6, value });
  const w = new Writer();
  w.struct(meta as any);
  const footer = w.bytes();
  const len = Buffer.alloc(4);
  len.writeUInt32LE(footer.length);
  return Buffer.concat([file.subarray(0, start), footer, len, Buffer.from('PAR1')]);
}

/** The file with field `id` of the first column chunk's metadata set to `value`. */
function withChunkField(file: Uint8Array, id: number, value: bigint): Uint8Array {
  return withFooterField(file, [4, 0, 1, 0, 3, id], value);
}

/** `mib` MiB of zeros as raw deflate, about 1 KiB per MiB (full-flushed blocks repeated). */
function zerosDeflated(mib: number): { packed: Buffer; crc: number } {
  const zero = Buffer.alloc(1 << 20);
  const block = deflateRawSync(zero, { finishFlush: constants.Z_FULL_FLUSH });
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = crc32(zero, crc);
  return { packed: Buffer.concat([...Array(mib).fill(block), Buffer.from([0x03, 0x00])]), crc };
}

const small = (name: string, text: string): RawEntry => {
  const data = enc.encode(text);
  return { name, packed: deflateRawSync(data), crc: crc32(data), declared: data.length };
};

/** A zlib stream (PDF FlateDecode) of `mib` MiB of zeros. */
function zlibZeros(mib: number): Buffer {
  const { packed } = zerosDeflated(mib);
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((mib * 2 ** 20) % 65521) * 65536 + 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0x9c]), packed, adler]);
}

/** A one-page PDF whose content stream is `stream` (with the filter given). */
function pdfWithStream(stream: Buffer, dict: string): Uint8Array {
  const head = Buffer.from('%PDF-1.4\n');
  const objs = [
    Buffer.from('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n'),
    Buffer.from('2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n'),
    Buffer.from('3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>\nendobj\n'),
    Buffer.concat([Buffer.from(`4 0 obj\n<< ${dict} >>\nstream\n`), stream, Buffer.from('\nendstream\nendobj\n')]),
  ];
  const offsets: number[] = [];
  let at = head.length;
  for (const o of objs) {
    offsets.push(at);
    at += o.length;
  }
  const xref = `xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`;
  return new Uint8Array(Buffer.concat([head, ...objs, Buffer.from(xref)]));
}

/**
 * Documents for a file_upload source: broken PDFs, DOCX and XLSX that are no zip or broken zips,
 * zip bombs (declared, hidden from the directory, overlapping entries), a PDF bomb. `bombMib`
 * is how far the hidden bombs expand.
 */
export async function hostileDocuments(bombMib: number): Promise<HostileFile[]> {
  const pdf = Buffer.from(await pdfOf([['A page of a document that will be cut short.']]));
  const hidden = zerosDeflated(bombMib);
  const mib = zerosDeflated(1);
  const pdfBomb = zlibZeros(bombMib);
  const doc = (label: string, name: string, type: string, bytes: Uint8Array, expect?: string): HostileFile => ({ label, name, type, bytes, expect });
  const contentTypes = small('[Content_Types].xml', '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>');
  return [
    doc('pdf-truncated', 'cut.pdf', 'application/pdf', pdf.subarray(0, pdf.length >> 1)),
    doc('pdf-header-only', 'header.pdf', 'application/pdf', enc.encode('%PDF-1.7\n')),
    doc('pdf-garbage-xref', 'xref.pdf', 'application/pdf', Buffer.concat([pdf.subarray(0, pdf.length - 40), Buffer.from('startxref\n999999999\n%%EOF\n')])),
    doc('pdf-stream-length-lies', 'length.pdf', 'application/pdf', pdfWithStream(Buffer.from('BT /F1 12 Tf (hello) Tj ET'), '/Length 2147483647')),
    doc(`pdf-flate-bomb-${bombMib}MiB`, 'bomb.pdf', 'application/pdf', pdfWithStream(pdfBomb, `/Length ${pdfBomb.length} /Filter /FlateDecode`), 'zip_bomb'),
    doc('docx-not-a-zip', 'plain.docx', DOCX, enc.encode('this is not a zip archive at all')),
    doc('docx-truncated-zip', 'cut.docx', DOCX, zipOf([{ name: 'word/document.xml', data: enc.encode('<w:document/>') }]).subarray(0, 40)),
    doc('docx-directory-past-end', 'dir.docx', DOCX, (() => {
      const z = Buffer.from(zipOf([{ name: 'word/document.xml', data: enc.encode('<w:document/>') }]));
      z.writeUInt32LE(0x7fffffff, z.length - 6);
      return z;
    })()),
    doc('docx-declared-4gib', 'declared.docx', DOCX, rawZip([contentTypes, { name: 'word/document.xml', packed: Buffer.from([3, 0]), crc: 0, declared: 0xffffffff }]), 'zip_bomb'),
    doc('docx-ratio-bomb', 'ratio.docx', DOCX, zipBomb(), 'zip_bomb'),
    doc(`docx-hidden-bomb-${bombMib}MiB`, 'hidden.docx', DOCX, rawZip([contentTypes, small('_rels/.rels', '<Relationships/>'), { name: 'word/document.xml', ...hidden, declared: 1000 }]), 'zip_bomb'),
    doc('docx-overlapping-entries', 'overlap.docx', DOCX, rawZip([contentTypes, ...Array.from({ length: 400 }, (_, i) => ({ name: `word/document${i ? i : ''}.xml`, ...mib, declared: 1 << 20, shared: 'zeros' }))])),
    doc(`xlsx-hidden-bomb-${bombMib}MiB`, 'hidden.xlsx', XLSX, rawZip([contentTypes, { name: 'xl/worksheets/sheet1.xml', ...hidden, declared: 1000 }]), 'zip_bomb'),
    doc('xlsx-overlapping-sheets', 'overlap.xlsx', XLSX, rawZip([contentTypes, ...Array.from({ length: 400 }, (_, i) => ({ name: `xl/worksheets/sheet${i + 1}.xml`, ...mib, declared: 1 << 20, shared: 'zeros' }))])),
    doc('zip-20001-entries', 'many.docx', DOCX, rawZip(Array.from({ length: 20_001 }, (_, i) => ({ name: `e${i}`, packed: Buffer.from([3, 0]), crc: 0, declared: 0, shared: 'empty' }))), 'zip_bomb'),
  ];
}

/** Names a file may be uploaded under that must not reach outside the service's storage. */
export function traversalNames(marker: string): string[] {
  return [
    `../../../../../../tmp/${marker}-a.txt`,
    `..\\..\\..\\..\\tmp\\${marker}-b.txt`,
    `/tmp/${marker}-c.txt`,
    `a/../../../../../../tmp/${marker}-d.txt`,
    `%2e%2e%2f%2e%2e%2f${marker}-e.txt`,
    `${marker}-f\u0000.txt`,
    `${marker}-g\r\nContent-Type: text/html.txt`,
    '..',
    '.',
    'C:\\Windows\\system.ini',
    `${'x'.repeat(1000)}.txt`,
  ];
}
