// The native Parquet column-chunk reader (native/core/parquet/, bulk/parquet/native-reader.ts):
// files written by parquet-wasm (through the testkit writer and directly, with each codec, page
// version and dictionary setting) decode to exactly what parquet-wasm's decode gives through
// group.ts; what it does not read is refused as NativeUnsupported; hostile chunks (cut short,
// lying page headers, pages claiming 2^31 values, random damage) end in clean errors.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { decodeParquetChunk, SableError, type NativeParquetChunkSpec } from '../../dist/engine/index.js';
import { parquetBytes, recordBatch, type VectorBatch, type WriterOptions } from '../../dist/testkit/parquet-writer.js';
import { readFooter, rowGroupFile, type Footer, type RandomAccess } from '../../dist/bulk/parquet/row-group-file.js';
import { groupData, type GroupData } from '../../dist/bulk/parquet/group.js';
import { shapeOf, ShapeError } from '../../dist/bulk/parquet/shape.js';
import { NativeUnsupported, readGroupNative, readGroupNativeOrWhyNot, schemaLeaves } from '../../dist/bulk/parquet/native-reader.js';
import { Writer, type ListValue, type Struct } from '../../dist/bulk/parquet/thrift-compact.js';

const dir = mkdtempSync(join(tmpdir(), 'sable-native-parquet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function inMemory(bytes: Uint8Array): RandomAccess {
  return { size: bytes.length, read: async (a: number, b: number) => Uint8Array.from(bytes.subarray(a, b)) };
}

interface Props {
  compression: pq.Compression;
  dictionary: boolean;
  v2: boolean;
  rowGroupRows: number;
}

function write(batches: VectorBatch[], o: WriterOptions, p: Props): Uint8Array {
  const table = new arrow.Table(batches.map((b) => recordBatch(b, o)));
  return writeTable(table, p);
}

function writeTable(table: arrow.Table, p: Props): Uint8Array {
  const props = new pq.WriterPropertiesBuilder()
    .setCompression(p.compression)
    .setDictionaryEnabled(p.dictionary)
    .setWriterVersion(p.v2 ? pq.WriterVersion.V2 : pq.WriterVersion.V1)
    .setMaxRowGroupSize(p.rowGroupRows)
    // Small pages: every chunk spans several.
    .setDataPageSizeLimit(4096)
    .build();
  return pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props);
}

/** What parquet-wasm makes of row group g, through group.ts (the decoder in use today). */
async function wasmGroups(bytes: Uint8Array, dim: number): Promise<{ groups: GroupData[]; shape: ReturnType<typeof shapeOf> }> {
  const file = inMemory(bytes);
  const footer = await readFooter(file);
  const groups: GroupData[] = [];
  let shape: ReturnType<typeof shapeOf> | undefined;
  let first = 0;
  for (let g = 0; g < footer.rowGroups.length; g++) {
    const f = await pq.ParquetFile.fromFile(await rowGroupFile(file, footer, g));
    const t = arrow.tableFromIPC((await f.read({ rowGroups: [0] })).intoIPCStream());
    f.free();
    shape ??= shapeOf(t.schema, 0, [], dim, false);
    groups.push(groupData(t, shape, dim, first));
    first += t.numRows;
  }
  return { groups, shape: shape! };
}

/** group.ts leaves whatever Arrow holds under a null number; the native reader leaves 0: compare valid rows. */
function comparable(groups: GroupData[]): GroupData[] {
  return groups.map((g) => ({
    ...g,
    metadata: g.metadata.map((m) => {
      if (!m.valid || !m.numbers) return m;
      const numbers = m.numbers.map((x, r) => (m.valid![r] ? x : 0));
      return { ...m, numbers };
    }),
  }));
}

async function nativeGroups(bytes: Uint8Array, shape: ReturnType<typeof shapeOf>, dim: number): Promise<GroupData[]> {
  const file = inMemory(bytes);
  const footer = await readFooter(file);
  const out: GroupData[] = [];
  let first = 0;
  for (let g = 0; g < footer.rowGroups.length; g++) {
    const d = await readGroupNative(file, footer, shape, dim, g, first);
    out.push(d);
    first += d.rows;
  }
  return out;
}

/** The column chunks' metadata, all groups: codec, encodings and the page kinds written. */
function chunkMetas(footer: Footer): Struct[] {
  return footer.rowGroups.flatMap((g) => ((g.get(1)!.value as ListValue).items as Struct[]).map((c) => c.get(3)!.value as Struct));
}
const pageTypes = (m: Struct) => (((m.get(13)?.value as ListValue | undefined)?.items ?? []) as Struct[]).map((s) => Number(s.get(1)!.value));
const encodings = (m: Struct) => ((m.get(2)!.value as ListValue).items as number[]).map(Number);
const CODEC = { [pq.Compression.UNCOMPRESSED]: 0, [pq.Compression.SNAPPY]: 1, [pq.Compression.GZIP]: 2, [pq.Compression.ZSTD]: 6 } as Record<number, number>;

/** One column chunk's bytes and the spec its footer gives (first group), for the hostile tests. */
async function chunkAndSpec(bytes: Uint8Array, column: string): Promise<{ chunk: Uint8Array; spec: NativeParquetChunkSpec }> {
  const footer = await readFooter(inMemory(bytes));
  const leaf = schemaLeaves(footer).find((l) => l.path[0] === column)!;
  const m = chunkMetas(footer).find((c) => new TextDecoder().decode((c.get(3)!.value as ListValue).items[0] as Uint8Array) === column)!;
  const data = Number(m.get(9)!.value);
  const dict = m.get(11) ? Number(m.get(11)!.value) : undefined;
  const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
  return {
    chunk: bytes.slice(start, start + Number(m.get(7)!.value)),
    spec: {
      physicalType: leaf.physical, codec: Number(m.get(4)!.value), maxDefinitionLevel: leaf.maxDef, maxRepetitionLevel: leaf.maxRep,
      numValues: Number(m.get(5)!.value), uncompressedSize: Number(m.get(6)!.value), typeLength: 0, limitBytes: 1 << 30,
    },
  };
}

function sample(n: number, dim: number, seed: number, f64 = false): VectorBatch {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  const vectors = f64 ? new Float64Array(n * dim) : new Float32Array(n * dim);
  for (let i = 0; i < vectors.length; i++) vectors[i] = rnd() * 2 - 1;
  return {
    ids: BigInt64Array.from({ length: n }, (_, i) => BigInt(seed * 100_000 + i * 7)),
    vectors,
    dim,
    metadata: {
      tag: Array.from({ length: n }, (_, i) => (i % 7 === 3 ? null : `t${i % 13}-é`)),
      score: Float64Array.from({ length: n }, (_, i) => i / 3),
      rank: Int32Array.from({ length: n }, (_, i) => i - 500),
      flag: Array.from({ length: n }, (_, i) => i % 3 === 0),
    },
  };
}

describe('native Parquet reader: same rows as parquet-wasm', () => {
  const cases: { name: string; p: Props; o: WriterOptions; f64?: boolean }[] = [];
  for (const compression of [pq.Compression.UNCOMPRESSED, pq.Compression.SNAPPY, pq.Compression.ZSTD, pq.Compression.GZIP]) {
    for (const dictionary of [false, true]) {
      for (const v2 of [false, true]) {
        cases.push({ name: `${pq.Compression[compression]} dictionary=${dictionary} v${v2 ? 2 : 1}`, p: { compression, dictionary, v2, rowGroupRows: 700 }, o: { listKind: 'fixed' } });
      }
    }
  }
  cases.push({ name: 'variable-size list, SNAPPY, v1', p: { compression: pq.Compression.SNAPPY, dictionary: true, v2: false, rowGroupRows: 1000 }, o: { listKind: 'list' } });
  cases.push({ name: 'float64 vectors, ZSTD, v2', p: { compression: pq.Compression.ZSTD, dictionary: false, v2: true, rowGroupRows: 1000 }, o: { listKind: 'fixed' }, f64: true });

  for (const c of cases) {
    it(c.name, async () => {
      const dim = 12;
      const bytes = write([sample(1500, dim, 1, c.f64), sample(600, dim, 2, c.f64)], c.o, c.p);
      const footer = await readFooter(inMemory(bytes));
      // The file really is what the case says: codec, dictionary pages or not, v1 or v2 pages.
      for (const m of chunkMetas(footer)) {
        expect(Number(m.get(4)!.value)).toBe(CODEC[c.p.compression]);
        if (!c.p.dictionary) expect(encodings(m)).not.toContain(8);
        const types = pageTypes(m);
        expect(types).toContain(c.p.v2 ? 3 : 0);
        expect(types).not.toContain(c.p.v2 ? 0 : 3);
      }
      if (c.p.dictionary) expect(chunkMetas(footer).some((m) => pageTypes(m).includes(2))).toBe(true);
      const { groups, shape } = await wasmGroups(bytes, dim);
      expect(shape.metadata.map((m) => m.kind)).toEqual(['string', 'number', 'number', 'bool']);
      const native = await nativeGroups(bytes, shape, dim);
      expect(native.map((g) => g.rows)).toEqual(groups.map((g) => g.rows));
      expect(native.length).toBeGreaterThan(1);
      for (let g = 0; g < groups.length; g++) {
        expect(native[g].ids).toEqual(groups[g].ids);
        expect(Buffer.from(native[g].vectors.buffer, native[g].vectors.byteOffset, native[g].vectors.byteLength)
          .equals(Buffer.from(groups[g].vectors.buffer, groups[g].vectors.byteOffset, groups[g].vectors.byteLength))).toBe(true);
        expect(comparable([native[g]])[0].metadata).toEqual(comparable([groups[g]])[0].metadata);
      }
    });
  }

  it('reads the testkit writer\'s files (SNAPPY), with the bigint, int32-id and no-id shapes', async () => {
    const dim = 5;
    const bytes = parquetBytes([sample(2300, dim, 3)], { rowGroupRows: 1000 });
    const { groups, shape } = await wasmGroups(bytes, dim);
    expect(await nativeGroups(bytes, shape, dim)).toEqual(groups);
    // int32 ids and an int64 metadata column, with nulls.
    const n = 900;
    const big = arrow.vectorFromArray(Array.from({ length: n }, (_, i) => (i % 4 ? BigInt(i) * 1_000_003n : null)), new arrow.Int64());
    const table = new arrow.Table({
      doc_id: arrow.makeVector(Int32Array.from({ length: n }, (_, i) => i * 2 - 100)),
      vector: arrow.makeVector(recordBatch(sample(n, dim, 4)).getChild('embedding')!.data[0]),
      big,
    });
    const b2 = writeTable(table, { compression: pq.Compression.SNAPPY, dictionary: true, v2: false, rowGroupRows: 400 });
    const w2 = await wasmGroups(b2, dim);
    expect(w2.shape.idColumn).toBe('doc_id');
    expect(w2.shape.metadata).toEqual([{ name: 'big', kind: 'bigint' }]);
    expect(comparable(await nativeGroups(b2, w2.shape, dim))).toEqual(comparable(w2.groups));
    // No id column: row offsets.
    const b3 = parquetBytes([{ ...sample(300, dim, 5), ids: null }], { rowGroupRows: 100 });
    const w3 = await wasmGroups(b3, dim);
    expect(await nativeGroups(b3, w3.shape, dim)).toEqual(w3.groups);
  });

  it('a string column of megabytes (its buffer grows past the size where it is mapped on its own)', async () => {
    const dim = 2;
    const n = 2500;
    const b = sample(n, dim, 18);
    b.metadata = { body: Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : `${i}:`.padEnd(1000 + (i % 3000), String.fromCharCode(97 + (i % 26))))) };
    const bytes = write([b], {}, { compression: pq.Compression.SNAPPY, dictionary: false, v2: false, rowGroupRows: n });
    const { groups, shape } = await wasmGroups(bytes, dim);
    expect(groups[0].metadata[0].strings!.reduce((t, x) => t + (x?.length ?? 0), 0)).toBeGreaterThan(5_000_000);
    expect(await nativeGroups(bytes, shape, dim)).toEqual(groups);
  });

  it('refuses null vectors, empty lists and null components as group.ts does', async () => {
    const dim = 3;
    const item = new arrow.Field('item', new arrow.Float32(), true);
    const cases: [(number | null)[] | null, string][] = [[null, 'null_vector'], [[], 'dimension_mismatch'], [[1, null, 3], 'non_finite_value'], [[1, 2], 'dimension_mismatch']];
    for (const [bad, type] of cases) {
      const rows: ((number | null)[] | null)[] = Array.from({ length: 40 }, (_, i) => [i, i + 0.5, -i]);
      rows[27] = bad;
      const table = new arrow.Table({
        id: arrow.makeVector(BigInt64Array.from({ length: 40 }, (_, i) => BigInt(i))),
        embedding: arrow.vectorFromArray(rows, new arrow.List(item)),
      });
      const bytes = writeTable(table, { compression: pq.Compression.SNAPPY, dictionary: false, v2: false, rowGroupRows: 40 });
      const f = await pq.ParquetFile.fromFile(new Blob([bytes]));
      const t = arrow.tableFromIPC((await f.read({ rowGroups: [0] })).intoIPCStream());
      f.free();
      const shape = shapeOf(t.schema, 40, [40], dim, false);
      const wasmErr = (() => { try { groupData(t, shape, dim, 100); } catch (e) { return e as ShapeError; } })();
      const nativeErr = await readGroupNative(inMemory(bytes), await readFooter(inMemory(bytes)), shape, dim, 0, 100).catch((e) => e);
      expect(wasmErr?.type).toBe(type);
      expect(nativeErr).toBeInstanceOf(ShapeError);
      expect(nativeErr.type).toBe(type);
      if (type !== 'non_finite_value') expect(nativeErr.message).toBe(wasmErr!.message);
      else expect(nativeErr.message).toBe('a vector near row 127 holds a null component');
    }
  });

  it('reads the delta encodings v2 writers fall back to (DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY)', async () => {
    const dim = 6;
    const table = new arrow.Table([recordBatch(sample(1300, dim, 12))]);
    const written = [pq.Encoding.DELTA_LENGTH_BYTE_ARRAY, pq.Encoding.DELTA_BYTE_ARRAY].map((tagEncoding) => {
      const props = new pq.WriterPropertiesBuilder().setCompression(pq.Compression.SNAPPY).setDictionaryEnabled(false)
        .setWriterVersion(pq.WriterVersion.V2).setMaxRowGroupSize(500).setDataPageSizeLimit(2048)
        .setColumnEncoding('id', pq.Encoding.DELTA_BINARY_PACKED).setColumnEncoding('rank', pq.Encoding.DELTA_BINARY_PACKED)
        .setColumnEncoding('tag', tagEncoding).build();
      return pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props);
    });
    const seen = new Set<number>();
    for (const bytes of written) {
      for (const m of chunkMetas(await readFooter(inMemory(bytes)))) for (const e of encodings(m)) seen.add(e);
      const { groups, shape } = await wasmGroups(bytes, dim);
      expect(comparable(await nativeGroups(bytes, shape, dim))).toEqual(comparable(groups));
    }
    for (const e of [5, 6, 7]) expect(seen).toContain(e);
  });

  it('names the same bad rows as group.ts: wrong dimension, non-finite values', async () => {
    const dim = 4;
    const lengths = Array.from({ length: 50 }, (_, i) => (i === 37 ? 3 : dim));
    const short = { ids: BigInt64Array.from({ length: 50 }, (_, i) => BigInt(i)), vectors: new Float32Array(50 * dim - 1).fill(0.5), dim };
    const b1 = parquetBytes([short], { listKind: 'list', rowLengths: lengths, rowGroupRows: 20 });
    const file = inMemory(b1);
    const footer = await readFooter(file);
    const shape = (await wasmGroups(parquetBytes([sample(10, dim, 6)], {}), dim)).shape;
    const wide = { ...shape, metadata: [] };
    await expect(readGroupNative(file, footer, wide, dim, 1, 20)).rejects.toThrow(new ShapeError('dimension_mismatch', 'row 37 has 3 values; the dataset dimension is 4'));
    const nan = sample(30, dim, 7);
    nan.vectors[13 * dim + 2] = Number.NaN;
    const b2 = parquetBytes([{ ...nan, metadata: undefined }], { rowGroupRows: 30 });
    const err = await readGroupNative(inMemory(b2), await readFooter(inMemory(b2)), wide, dim, 0, 0).catch((e) => e);
    expect(err).toBeInstanceOf(ShapeError);
    expect(err.type).toBe('non_finite_value');
    expect(err.message).toBe('row 13 holds a non-finite value (NaN) at position 2');
    // A float64 past float32's range becomes Infinity in float32 and is refused.
    const huge = sample(30, dim, 14, true);
    huge.vectors[21 * dim + 1] = 1e300;
    const b3 = parquetBytes([{ ...huge, metadata: undefined }], { rowGroupRows: 30 });
    const nativeErr = await readGroupNative(inMemory(b3), await readFooter(inMemory(b3)), wide, dim, 0, 0).catch((e) => e);
    expect(nativeErr).toBeInstanceOf(ShapeError);
    expect(nativeErr.message).toMatch(/^row 21 holds a non-finite value \(1e\+300\) at position 1$/);
    // parquet-wasm's groups (group.ts) refuse it too: the stored float32 is checked, not the double.
    const wasmErr = await wasmGroups(b3, dim).catch((e) => e);
    expect(wasmErr).toBeInstanceOf(ShapeError);
    expect(wasmErr.message).toBe(nativeErr.message);
  });
});

describe('native Parquet reader: what it refuses for parquet-wasm to read', () => {
  it('codecs other than UNCOMPRESSED, SNAPPY, ZSTD and GZIP (LZ4_RAW, BROTLI)', async () => {
    const dim = 4;
    for (const [compression, name] of [[pq.Compression.LZ4_RAW, 'LZ4_RAW'], [pq.Compression.BROTLI, 'BROTLI']] as const) {
      const bytes = write([sample(200, dim, 8)], {}, { compression, dictionary: false, v2: false, rowGroupRows: 200 });
      const { shape } = await wasmGroups(bytes, dim);
      const err = await nativeGroups(bytes, shape, dim).catch((e) => e);
      expect(err).toBeInstanceOf(NativeUnsupported);
      expect(err.message).toContain(`codec ${name}`);
    }
  });

  it('ZSTD and GZIP where their library cannot be opened: codec unavailable', () => {
    const path = join(dir, 'zstd.parquet');
    writeFileSync(path, write([sample(100, 4, 9)], {}, { compression: pq.Compression.ZSTD, dictionary: false, v2: false, rowGroupRows: 100 }));
    const gzipPath = join(dir, 'gzip.parquet');
    writeFileSync(gzipPath, write([sample(100, 4, 9)], {}, { compression: pq.Compression.GZIP, dictionary: false, v2: false, rowGroupRows: 100 }));
    const script = `
      import { readFileSync } from 'node:fs';
      import { readFooter } from '${process.cwd()}/dist/bulk/parquet/row-group-file.js';
      import { readGroupNative, NativeUnsupported } from '${process.cwd()}/dist/bulk/parquet/native-reader.js';
      const bytes = readFileSync(process.env.FILE);
      const file = { size: bytes.length, read: async (a, b) => Uint8Array.from(bytes.subarray(a, b)) };
      const shape = { vectorColumn: 'embedding', idColumn: 'id', metadata: [] };
      try { await readGroupNative(file, await readFooter(file), shape, 4, 0, 0); console.log('decoded'); }
      catch (e) { console.log(e instanceof NativeUnsupported ? 'unsupported' : 'other', e.message); }`;
    const run = (env: Record<string, string>) =>
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, ...env } }).trim();
    expect(run({ FILE: path, SABLE_ZSTD_LIBRARY: join(dir, 'no-such-libzstd.so.1') })).toMatch(/^unsupported .*codec unavailable: ZSTD needs .*no-such-libzstd\.so\.1/);
    expect(run({ FILE: path })).toBe('decoded');
    expect(run({ FILE: gzipPath, SABLE_ZLIB_LIBRARY: join(dir, 'no-such-libz.so.1') })).toMatch(/^unsupported .*codec unavailable: GZIP needs .*no-such-libz\.so\.1/);
    expect(run({ FILE: gzipPath })).toBe('decoded');
  });

  it('the worker\'s entry: a group, a fallback with the reason, or the ShapeError of a bad row', async () => {
    const dim = 4;
    const good = parquetBytes([sample(100, dim, 16)], { rowGroupRows: 100 });
    const { shape } = await wasmGroups(good, dim);
    const f1 = inMemory(good);
    const ok = await readGroupNativeOrWhyNot(f1, await readFooter(f1), shape, dim, 0, 0);
    expect('group' in ok && ok.group.rows).toBe(100);
    const lz4 = write([sample(100, dim, 16)], {}, { compression: pq.Compression.LZ4_RAW, dictionary: false, v2: false, rowGroupRows: 100 });
    const f2 = inMemory(lz4);
    expect(await readGroupNativeOrWhyNot(f2, await readFooter(f2), shape, dim, 0, 0)).toEqual({ fallback: expect.stringContaining('codec LZ4_RAW') });
    // Data the reader takes for corrupt falls back too: parquet-wasm gives the verdict.
    const damaged = good.slice();
    const { chunk } = await chunkAndSpec(good, 'embedding');
    const at = Buffer.from(good).indexOf(Buffer.from(chunk.subarray(0, 16)));
    damaged[at + 2] ^= 0x7f;
    const f3 = inMemory(damaged);
    expect(await readGroupNativeOrWhyNot(f3, await readFooter(f3), shape, dim, 0, 0)).toEqual({ fallback: expect.stringMatching(/^column embedding\.list\.item: corrupt/) });
    const nan = sample(10, dim, 17);
    nan.vectors[3] = Number.POSITIVE_INFINITY;
    const f4 = inMemory(parquetBytes([nan], {}));
    await expect(readGroupNativeOrWhyNot(f4, await readFooter(f4), shape, dim, 0, 0)).rejects.toBeInstanceOf(ShapeError);
  });

  it('unsigned ids', async () => {
    const n = 50;
    const table = new arrow.Table({
      id: arrow.makeVector(Uint32Array.from({ length: n }, (_, i) => i)),
      embedding: arrow.makeVector(recordBatch(sample(n, 4, 10)).getChild('embedding')!.data[0]),
    });
    const bytes = writeTable(table, { compression: pq.Compression.SNAPPY, dictionary: false, v2: false, rowGroupRows: n });
    const { shape } = await wasmGroups(bytes, 4);
    await expect(nativeGroups(bytes, shape, 4)).rejects.toBeInstanceOf(NativeUnsupported);
  });
});

describe('native Parquet reader: hostile chunks end in clean errors', () => {
  // PageHeader { type, uncompressed_page_size, compressed_page_size, data_page_header { num_values, encoding, def, rep } }
  function pageHeader(type: number, uncompressed: number, compressed: number, numValues: number, encoding = 0): Uint8Array {
    const I32 = 5;
    const inner: Struct = new Map([[1, { type: I32, value: numValues }], [2, { type: I32, value: encoding }], [3, { type: I32, value: 3 }], [4, { type: I32, value: 3 }]]);
    const h: Struct = new Map([[1, { type: I32, value: type }], [2, { type: I32, value: uncompressed }], [3, { type: I32, value: compressed }], [type === 2 ? 7 : 5, { type: 12, value: inner }]]);
    const w = new Writer();
    w.struct(h);
    return w.bytes();
  }
  const floats = (n: number) => new Uint8Array(Float32Array.from({ length: n }, (_, i) => i + 0.5).buffer);
  const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
  const spec = (over: Partial<NativeParquetChunkSpec>): NativeParquetChunkSpec => ({
    physicalType: 4, codec: 0, maxDefinitionLevel: 0, maxRepetitionLevel: 0, numValues: 8, uncompressedSize: 1000, typeLength: 0, limitBytes: 1 << 20, ...over,
  });
  const failure = (chunk: Uint8Array, s: NativeParquetChunkSpec): SableError => {
    try {
      decodeParquetChunk(chunk, s);
    } catch (e) {
      expect(e).toBeInstanceOf(SableError);
      return e as SableError;
    }
    throw new Error('decoded a hostile chunk');
  };

  it('decodes a well-formed hand-made chunk (the baseline the others break)', () => {
    const out = decodeParquetChunk(concat(pageHeader(0, 32, 32, 8), floats(8)), spec({}));
    expect(Array.from(out.values as Float32Array)).toEqual(Array.from({ length: 8 }, (_, i) => i + 0.5));
    expect(out.defLevels).toBeNull();
  });

  it('a page claiming 2^31 values, or more than the chunk declares', () => {
    expect(failure(concat(pageHeader(0, 32, 32, 2 ** 31), floats(8)), spec({})).message).toMatch(/out of the 32-bit range/);
    expect(failure(concat(pageHeader(0, 32, 32, 2 ** 31 - 1), floats(8)), spec({})).message).toMatch(/claims 2147483647 values; the chunk has 8 left/);
    // The chunk's own declaration is held to the caller's limit before anything is allocated.
    expect(failure(concat(pageHeader(0, 32, 32, 8), floats(8)), spec({ numValues: 2 ** 31 })).message).toMatch(/past what the limit/);
    expect(failure(concat(pageHeader(0, 32, 32, 8), floats(8)), spec({ uncompressedSize: 2 ** 31, limitBytes: 2 ** 30 })).message).toMatch(/past the limit/);
  });

  it('page sizes past the chunk or past the declared uncompressed size', () => {
    expect(failure(concat(pageHeader(0, 32, 2 ** 31 - 1, 8), floats(8)), spec({})).message).toMatch(/declares 2147483647 bytes; the chunk holds 32 more/);
    expect(failure(concat(pageHeader(0, 2 ** 31 - 1, 32, 8), floats(8)), spec({ codec: 1 })).message).toMatch(/total_uncompressed_size/);
    expect(failure(concat(pageHeader(0, 32, -5, 8), floats(8)), spec({})).message).toMatch(/missing or negative/);
    expect(failure(concat(pageHeader(0, 32, 32, 8), floats(7)), spec({})).message).toMatch(/the chunk holds 28 more/);
    expect(failure(concat(pageHeader(0, 32, 32, 6), floats(8)), spec({})).message).toMatch(/hold 6 values; the column metadata declares 8/);
    expect(failure(new Uint8Array([0x15, 0x00, 0x15]), spec({})).message).toMatch(/runs past the end/);
  });

  it('real chunks cut short at every length, and randomly damaged', async () => {
    const files = [
      write([sample(400, 8, 11)], {}, { compression: pq.Compression.SNAPPY, dictionary: true, v2: false, rowGroupRows: 400 }),
      // v2 pages, delta-encoded ids and strings, RLE booleans.
      write([sample(400, 8, 13)], {}, { compression: pq.Compression.ZSTD, dictionary: false, v2: true, rowGroupRows: 400 }),
      write([sample(400, 8, 15)], {}, { compression: pq.Compression.GZIP, dictionary: true, v2: false, rowGroupRows: 400 }),
    ];
    for (const [bytes, column] of files.flatMap((b) => ['embedding', 'tag', 'id', 'flag'].map((c) => [b, c] as const))) {
      const { chunk, spec: s } = await chunkAndSpec(bytes, column);
      expect(decodeParquetChunk(chunk, s).levels).toBe(s.numValues);
      for (let cut = 0; cut < chunk.length; cut += Math.max(1, Math.floor(chunk.length / 300))) failure(chunk.subarray(0, cut), s);
      let seed = 12345;
      const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
      for (let i = 0; i < 400; i++) {
        const damaged = chunk.slice();
        for (let k = 0; k <= rnd(4); k++) damaged[rnd(Math.min(damaged.length, k === 0 ? 64 : damaged.length))] = rnd(256);
        try {
          decodeParquetChunk(damaged, s);
        } catch (e) {
          expect(e).toBeInstanceOf(SableError);
          expect(['invalid_argument', 'unsupported']).toContain((e as SableError).code);
        }
      }
    }
  });
});
