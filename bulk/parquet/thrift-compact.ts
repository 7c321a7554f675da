/**
 * The Thrift compact protocol, generically: enough to read a Parquet footer (FileMetaData) into a
 * tree of fields, change a few of them, and write it back byte for byte otherwise. Field ids and
 * types are kept, so fields this code does not know survive the round trip.
 */
export const enum T {
  True = 1,
  False = 2,
  Byte = 3,
  I16 = 4,
  I32 = 5,
  I64 = 6,
  Double = 7,
  Binary = 8,
  List = 9,
  Set = 10,
  Map = 11,
  Struct = 12,
}

export type Value = boolean | number | bigint | Uint8Array | ListValue | MapValue | Struct;
export interface ListValue {
  kind: 'list';
  elem: T;
  set: boolean;
  items: Value[];
}
export interface MapValue {
  kind: 'map';
  key: T;
  val: T;
  entries: [Value, Value][];
}
/** Fields in their order, by id. */
export type Struct = Map<number, { type: T; value: Value }>;

export class Reader {
  pos = 0;
  constructor(private readonly b: Uint8Array) {}

  private byte(): number {
    if (this.pos >= this.b.length) throw new Error('the Thrift data ends early');
    return this.b[this.pos++];
  }

  private varint(): bigint {
    let out = 0n;
    let shift = 0n;
    for (;;) {
      const x = this.byte();
      out |= BigInt(x & 0x7f) << shift;
      if ((x & 0x80) === 0) return out;
      shift += 7n;
      if (shift > 70n) throw new Error('a Thrift varint is too long');
    }
  }

  private zigzag(): bigint {
    const v = this.varint();
    return (v >> 1n) ^ -(v & 1n);
  }

  private value(type: T): Value {
    switch (type) {
      case T.True:
        return true;
      case T.False:
        return false;
      case T.Byte:
        return (this.byte() << 24) >> 24;
      case T.I16:
      case T.I32:
        return Number(this.zigzag());
      case T.I64:
        return this.zigzag();
      case T.Double: {
        const v = new DataView(this.b.buffer, this.b.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case T.Binary: {
        const n = Number(this.varint());
        if (this.pos + n > this.b.length) throw new Error('a Thrift string runs past the end');
        const v = this.b.subarray(this.pos, this.pos + n);
        this.pos += n;
        return v;
      }
      case T.List:
      case T.Set: {
        const head = this.byte();
        const n = this.count(head >> 4 === 15 ? Number(this.varint()) : head >> 4);
        const elem = (head & 15) as T;
        const items: Value[] = [];
        for (let i = 0; i < n; i++) items.push(this.element(elem));
        return { kind: 'list', elem, set: type === T.Set, items };
      }
      case T.Map: {
        const n = this.count(Number(this.varint()));
        if (n === 0) return { kind: 'map', key: T.Binary, val: T.Binary, entries: [] };
        const kinds = this.byte();
        const key = (kinds >> 4) as T;
        const val = (kinds & 15) as T;
        const entries: [Value, Value][] = [];
        for (let i = 0; i < n; i++) entries.push([this.element(key), this.element(val)]);
        return { kind: 'map', key, val, entries };
      }
      case T.Struct:
        return this.struct();
      default:
        throw new Error(`unknown Thrift type ${type}`);
    }
  }

  /** An item of a list, set or map: booleans there are one byte each, unlike struct fields. */
  private element(type: T): Value {
    return type === T.True || type === T.False ? this.byte() === 1 : this.value(type);
  }

  /** A collection's declared size, refused when the bytes left cannot hold that many items. */
  private count(n: number): number {
    if (n > this.b.length - this.pos) throw new Error(`a Thrift collection declares ${n} items, more than the data holds`);
    return n;
  }

  struct(): Struct {
    const out: Struct = new Map();
    let last = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return out;
      const type = (head & 15) as T;
      const delta = head >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      last = id;
      out.set(id, { type, value: this.value(type) });
    }
  }
}

export class Writer {
  private readonly out: number[] = [];

  bytes(): Uint8Array<ArrayBuffer> {
    return Uint8Array.from(this.out);
  }

  private varint(v: bigint): void {
    do {
      let x = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) x |= 0x80;
      this.out.push(x);
    } while (v > 0n);
  }

  private zigzag(v: bigint): void {
    this.varint(v >= 0n ? v << 1n : ((-v) << 1n) - 1n);
  }

  private value(type: T, v: Value): void {
    switch (type) {
      case T.True:
      case T.False:
        return;
      case T.Byte:
        this.out.push((v as number) & 0xff);
        return;
      case T.I16:
      case T.I32:
        this.zigzag(BigInt(v as number));
        return;
      case T.I64:
        this.zigzag(v as bigint);
        return;
      case T.Double: {
        const b = new Uint8Array(8);
        new DataView(b.buffer).setFloat64(0, v as number, true);
        this.out.push(...b);
        return;
      }
      case T.Binary: {
        const b = v as Uint8Array;
        this.varint(BigInt(b.length));
        for (const x of b) this.out.push(x);
        return;
      }
      case T.List:
      case T.Set: {
        const l = v as ListValue;
        const n = l.items.length;
        if (n < 15) this.out.push((n << 4) | l.elem);
        else {
          this.out.push(0xf0 | l.elem);
          this.varint(BigInt(n));
        }
        for (const item of l.items) this.element(l.elem, item);
        return;
      }
      case T.Map: {
        const m = v as MapValue;
        this.varint(BigInt(m.entries.length));
        if (m.entries.length === 0) return;
        this.out.push((m.key << 4) | m.val);
        for (const [k, x] of m.entries) {
          this.element(m.key, k);
          this.element(m.val, x);
        }
        return;
      }
      case T.Struct:
        this.struct(v as Struct);
        return;
    }
  }

  private element(type: T, v: Value): void {
    if (type === T.True || type === T.False) this.out.push(v ? 1 : 2);
    else this.value(type, v);
  }

  struct(s: Struct): void {
    let last = 0;
    for (const [id, { type, value }] of [...s].sort((a, b) => a[0] - b[0])) {
      const wire = type === T.True || type === T.False ? (value ? T.True : T.False) : type;
      const delta = id - last;
      if (delta > 0 && delta <= 15) this.out.push((delta << 4) | wire);
      else {
        this.out.push(wire);
        this.zigzag(BigInt(id));
      }
      last = id;
      this.value(type, value);
    }
    this.out.push(0);
  }
}
