/**
 * all-MiniLM-L6-v2 as an ONNX model (opset 17, standard ops only), written from the same float32
 * weights the native encoder loads, so the ONNX Runtime peer runs exactly our model and nothing
 * fetched from a hub. The protobuf is encoded here (a few message types of onnx.proto) rather
 * than through a package, to keep the peer free of dependencies.
 *
 * The graph follows the PyTorch export of Hugging Face BERT (post-norm, exact erf GELU, additive
 * key mask, scores / sqrt(head_dim)), the shape ONNX Runtime's own optimiser knows how to fuse,
 * then mean-pools the last hidden states over the mask and L2-normalises in-graph.
 */
import type { Tensor } from '../../engine/embedding/safetensors.js';

// ---- protobuf: wire types 0 (varint), 2 (length-delimited), 5 (fixed32) -------------------------

/** A message as a list of chunks: the 90 MB of weights are copied once, when the model is joined. */
class Pb {
  readonly parts: Uint8Array[] = [];
  length = 0;

  private push(b: Uint8Array): void {
    this.parts.push(b);
    this.length += b.length;
  }
  private raw(v: number | bigint): void {
    const out: number[] = [];
    // int64 fields: negative values are 10-byte two's complement varints.
    let n = typeof v === 'bigint' ? BigInt.asUintN(64, v) : v < 0 ? BigInt.asUintN(64, BigInt(v)) : v;
    if (typeof n === 'bigint') {
      while (n >= 0x80n) { out.push(Number(n & 0x7fn) | 0x80); n >>= 7n; }
      out.push(Number(n));
    } else {
      while (n >= 0x80) { out.push((n % 0x80) | 0x80); n = Math.floor(n / 0x80); }
      out.push(n);
    }
    this.push(Uint8Array.from(out));
  }
  int(field: number, v: number | bigint): this {
    this.raw(field << 3);
    this.raw(v);
    return this;
  }
  bytes(field: number, b: Uint8Array): this {
    this.raw((field << 3) | 2);
    this.raw(b.length);
    this.push(b);
    return this;
  }
  str(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }
  float(field: number, f: number): this {
    this.raw((field << 3) | 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, f, true);
    this.push(b);
    return this;
  }
  msg(field: number, m: Pb): this {
    this.raw((field << 3) | 2);
    this.raw(m.length);
    for (const p of m.parts) this.push(p);
    return this;
  }
  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) { out.set(p, at); at += p.length; }
    return out;
  }
}

// ---- onnx.proto -----------------------------------------------------------------------------------

const FLOAT = 1;
const INT64 = 7;

type Attr = { i: number } | { f: number } | { ints: number[] };

/** ValueInfoProto of a tensor; string dims are symbolic. */
function valueInfo(name: string, elemType: number, dims: (number | string)[]): Pb {
  const shape = new Pb();
  for (const d of dims) shape.msg(1, typeof d === 'string' ? new Pb().str(2, d) : new Pb().int(1, d));
  const tensorType = new Pb().int(1, elemType).msg(2, shape);
  return new Pb().str(1, name).msg(2, new Pb().msg(1, tensorType));
}

class Graph {
  private readonly nodes: Pb[] = [];
  private readonly inits: Pb[] = [];
  private count = 0;

  /** An initializer (TensorProto with raw_data, little-endian like the hosts ORT runs on). */
  init(name: string, dims: number[], data: Float32Array | BigInt64Array): string {
    const t = new Pb();
    for (const d of dims) t.int(1, d);
    t.int(2, data instanceof Float32Array ? FLOAT : INT64).str(8, name);
    t.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    this.inits.push(t);
    return name;
  }
  scalar(name: string, v: number): string {
    return this.init(name, [], Float32Array.of(v));
  }
  ints(name: string, v: number[]): string {
    return this.init(name, [v.length], BigInt64Array.from(v, BigInt));
  }

  /** One node with one output, named after its op; returns the output's name. */
  op(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, output?: string): string {
    const name = `${opType}_${this.count++}`;
    const out = output ?? name;
    const n = new Pb();
    for (const i of inputs) n.str(1, i);
    n.str(2, out).str(3, name).str(4, opType);
    for (const [key, a] of Object.entries(attrs)) {
      const p = new Pb().str(1, key);
      // AttributeProto.type: FLOAT 1, INT 2, INTS 7; repeated ints unpacked (valid for proto2).
      if ('f' in a) p.float(2, a.f).int(20, 1);
      else if ('i' in a) p.int(3, a.i).int(20, 2);
      else { for (const v of a.ints) p.int(8, v); p.int(20, 7); }
      n.msg(5, p);
    }
    this.nodes.push(n);
    return out;
  }

  model(inputs: Pb[], outputs: Pb[]): Uint8Array {
    const g = new Pb();
    for (const n of this.nodes) g.msg(1, n);
    g.str(2, 'all-minilm-l6-v2');
    for (const t of this.inits) g.msg(5, t);
    for (const v of inputs) g.msg(11, v);
    for (const v of outputs) g.msg(12, v);
    return new Pb()
      .int(1, 8) // ir_version
      .str(2, 'sable-bench')
      .msg(7, g)
      .msg(8, new Pb().str(1, '').int(2, 17))
      .finish();
  }
}

// ---- BERT -----------------------------------------------------------------------------------------

/** Row-major [rows, cols] -> [cols, rows]: HF linear weights are [out, in], MatMul wants [in, out]. */
function transposed(t: Tensor): Float32Array {
  const [rows, cols] = t.shape;
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = t.data[r * cols + c];
  return out;
}

export interface BertGraphConfig {
  heads: number;
  eps: number;
}

/**
 * The ModelProto bytes: inputs input_ids, attention_mask (int64 [batch, seq]); output embedding
 * (float [batch, hidden]), the L2-normalised mask-weighted mean of the last hidden states.
 */
export function bertOnnxModel(weights: Map<string, Tensor>, cfg: BertGraphConfig): Uint8Array {
  const get = (name: string): Tensor => {
    const t = weights.get(name);
    if (!t) throw new Error(`weight ${name} missing`);
    return t;
  };
  const g = new Graph();
  const vec = (name: string): string => g.init(name, get(name).shape, get(name).data);
  const hidden = get('embeddings.word_embeddings.weight').shape[1];
  const headDim = hidden / cfg.heads;
  const ln = (x: string, prefix: string): string =>
    g.op('LayerNormalization', [x, vec(`${prefix}.weight`), vec(`${prefix}.bias`)], { axis: { i: -1 }, epsilon: { f: cfg.eps } });
  const linear = (x: string, prefix: string): string => {
    const w = get(`${prefix}.weight`);
    const wt = g.init(`${prefix}.weight_t`, [w.shape[1], w.shape[0]], transposed(w));
    return g.op('Add', [g.op('MatMul', [x, wt]), vec(`${prefix}.bias`)]);
  };

  // Embeddings. Token types are always 0 here, so their row is folded into the position table.
  const pos = get('embeddings.position_embeddings.weight');
  const type0 = get('embeddings.token_type_embeddings.weight').data.subarray(0, hidden);
  const posType = new Float32Array(pos.data);
  for (let i = 0; i < posType.length; i++) posType[i] += type0[i % hidden];
  const posTable = g.init('position_plus_type0', pos.shape, posType);
  const zero = g.ints('zero_1d', [0]);
  const seqLen = g.op('Shape', ['input_ids'], { start: { i: 1 }, end: { i: 2 } });
  const words = g.op('Gather', [vec('embeddings.word_embeddings.weight'), 'input_ids']);
  let x = g.op('Add', [words, g.op('Slice', [posTable, zero, seqLen, zero])]);
  x = ln(x, 'embeddings.LayerNorm');

  // Padded keys get -1e9 before the softmax: exp() of it is 0 in float32.
  const maskF = g.op('Cast', ['attention_mask'], { to: { i: FLOAT } });
  const notMask = g.op('Sub', [g.scalar('one', 1), maskF]);
  const keyBias = g.op('Unsqueeze', [g.op('Mul', [notMask, g.scalar('minus_1e9', -1e9)]), g.ints('axes_1_2', [1, 2])]);

  const splitHeads = g.ints('split_heads', [0, 0, cfg.heads, headDim]);
  const mergeHeads = g.ints('merge_heads', [0, 0, hidden]);
  const scale = g.scalar('sqrt_head_dim', Math.sqrt(headDim));
  const sqrt2 = g.scalar('sqrt2', Math.SQRT2);
  const half = g.scalar('half', 0.5);
  const one = 'one';
  const heads = (t: string, perm: number[]): string => g.op('Transpose', [g.op('Reshape', [t, splitHeads])], { perm: { ints: perm } });

  for (let l = 0; weights.has(`encoder.layer.${l}.attention.self.query.weight`); l++) {
    const p = `encoder.layer.${l}`;
    const q = heads(linear(x, `${p}.attention.self.query`), [0, 2, 1, 3]); // [B, h, S, d]
    const k = heads(linear(x, `${p}.attention.self.key`), [0, 2, 3, 1]); // [B, h, d, S]
    const v = heads(linear(x, `${p}.attention.self.value`), [0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Div', [g.op('MatMul', [q, k]), scale]), keyBias]);
    const ctx = g.op('MatMul', [g.op('Softmax', [scores], { axis: { i: -1 } }), v]);
    const merged = g.op('Reshape', [g.op('Transpose', [ctx], { perm: { ints: [0, 2, 1, 3] } }), mergeHeads]);
    x = ln(g.op('Add', [linear(merged, `${p}.attention.output.dense`), x]), `${p}.attention.output.LayerNorm`);

    const inter = linear(x, `${p}.intermediate.dense`);
    // Exact GELU as PyTorch exports it: x * (1 + erf(x / sqrt 2)) * 0.5.
    const erf = g.op('Add', [g.op('Erf', [g.op('Div', [inter, sqrt2])]), one]);
    const gelu = g.op('Mul', [g.op('Mul', [inter, erf]), half]);
    x = ln(g.op('Add', [linear(gelu, `${p}.output.dense`), x]), `${p}.output.LayerNorm`);
  }

  // Masked sum, then L2 normalisation: dividing by the token count first would cancel out.
  const tokenMask = g.op('Unsqueeze', [maskF, g.ints('axis_2', [2])]);
  const sum = g.op('ReduceSum', [g.op('Mul', [x, tokenMask]), g.ints('axis_1', [1])], { keepdims: { i: 0 } });
  const norm = g.op('Max', [g.op('ReduceL2', [sum], { axes: { ints: [1] }, keepdims: { i: 1 } }), g.scalar('eps_norm', 1e-12)]);
  g.op('Div', [sum, norm], {}, 'embedding');

  return g.model(
    [valueInfo('input_ids', INT64, ['batch', 'seq']), valueInfo('attention_mask', INT64, ['batch', 'seq'])],
    [valueInfo('embedding', FLOAT, ['batch', hidden])],
  );
}
