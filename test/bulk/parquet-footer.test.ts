// The Parquet footer codec (bulk/parquet/thrift-compact.ts) and the one-row-group files built
// from it (row-group-file.ts), which let files of 4 GiB and more be read: a footer decoded and
// encoded again is byte-identical, and each row group read through its own small file holds the
// rows the whole file holds there.
import { describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { Reader, Writer } from '../../dist/bulk/parquet/thrift-compact.js';
import { readFooter, rowGroupFile, rowGroupRows } from '../../dist/bulk/parquet/row-group-file.js';

function inMemory(bytes: Uint8Array) {
  return { size: bytes.length, read: async (a: number, b: number) => Uint8Array.from(bytes.subarray(a, b)) };
}

describe('Parquet footers and one-row-group files', () => {
  const n = 2300;
  const dim = 4;
  const bytes = parquetBytes(
    [{
      ids: BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 3)),
      vectors: Float32Array.from({ length: n * dim }, (_, i) => i / 7),
      dim,
      metadata: { tag: Array.from({ length: n }, (_, i) => (i % 5 ? `t${i % 11}` : null)), w: Float64Array.from({ length: n }, (_, i) => i / 2) },
    }],
    { rowGroupRows: 1000 },
  );

  it('decodes and re-encodes the footer byte for byte', () => {
    const length = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 8, 4).getUint32(0, true);
    const footer = bytes.subarray(bytes.length - 8 - length, bytes.length - 8);
    const w = new Writer();
    w.struct(new Reader(footer).struct());
    expect(Buffer.from(w.bytes()).equals(Buffer.from(footer))).toBe(true);
  });

  it('reads every row group through its own file', async () => {
    const file = inMemory(bytes);
    const footer = await readFooter(file);
    expect(footer.rowGroups.map(rowGroupRows)).toEqual([1000, 1000, 300]);
    let row = 0;
    for (let g = 0; g < footer.rowGroups.length; g++) {
      const f = await pq.ParquetFile.fromFile(await rowGroupFile(file, footer, g));
      const t = arrow.tableFromIPC((await f.read({ rowGroups: [0] })).intoIPCStream());
      f.free();
      expect(t.numRows).toBe(rowGroupRows(footer.rowGroups[g]));
      for (const r of [0, t.numRows - 1]) {
        const i = row + r;
        expect(t.getChild('id')!.get(r)).toBe(BigInt(i * 3));
        expect(t.getChild('tag')!.get(r)).toBe(i % 5 ? `t${i % 11}` : null);
        expect(t.getChild('w')!.get(r)).toBe(i / 2);
        expect(Array.from(t.getChild('embedding')!.get(r) as arrow.Vector)).toEqual(Array.from({ length: dim }, (_, j) => Math.fround((i * dim + j) / 7)));
      }
      row += t.numRows;
    }
    expect(row).toBe(n);
  });

  it('refuses what is not a Parquet footer', async () => {
    await expect(readFooter(inMemory(new TextEncoder().encode('not a parquet file at all')))).rejects.toThrow(/magic/);
  });

  it('reads booleans of a map as a byte each, and refuses collections longer than their bytes', () => {
    // Field 1, a map of 2 booleans to booleans: compact Thrift writes each of them as one byte.
    const map = Uint8Array.from([0x1b, 0x02, 0x11, 1, 2, 2, 1, 0]);
    const s = new Reader(map).struct();
    expect((s.get(1)!.value as { entries: unknown[] }).entries).toEqual([[true, false], [false, true]]);
    const w = new Writer();
    w.struct(s);
    expect(Array.from(w.bytes())).toEqual(Array.from(map));
    // 2^48 of them in a footer of a few bytes (it once looped, allocating, until memory ran out).
    const varint = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
    expect(() => new Reader(Uint8Array.from([0x1b, ...varint, 0x11, 0])).struct()).toThrow(/more than the data holds/);
    expect(() => new Reader(Uint8Array.from([0x19, 0xfc, ...varint, 0])).struct()).toThrow(/more than the data holds/);
  });
});
