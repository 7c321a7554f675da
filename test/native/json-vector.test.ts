import { describe, expect, it } from 'vitest';
import { parseJsonWithVector } from '../../dist/control-plane/http/json-vector.js';

/** What the service did before: JSON.parse, then Float32Array.from of the field. */
function reference(text: string, field = 'query'): unknown {
  const v = JSON.parse(text) as Record<string, unknown>;
  if (Array.isArray(v[field]) && (v[field] as unknown[]).every((x) => typeof x === 'number')) v[field] = Float32Array.from(v[field] as number[]);
  return v;
}

function same(text: string, field = 'query'): void {
  const got = parseJsonWithVector(Buffer.from(text), field) as Record<string, unknown>;
  const want = reference(text, field) as Record<string, unknown>;
  // A repeated key, or a number past the double range, leaves the array as JSON.parse gives it
  // (the search converts either form).
  const raw = got[field];
  const g = Array.isArray(raw) && raw.every((x) => typeof x === 'number') ? Float32Array.from(raw) : raw;
  const w = want[field];
  if (w instanceof Float32Array) {
    expect(g, text.slice(0, 120)).toBeInstanceOf(Float32Array);
    const gb = new Uint32Array((g as Float32Array).buffer);
    const wb = new Uint32Array(w.buffer);
    for (let i = 0; i < wb.length; i++) if (gb[i] !== wb[i]) throw new Error(`value ${i} differs in ${text.slice(0, 200)}: ${(g as Float32Array)[i]} vs ${w[i]}`);
    expect(gb.length).toBe(wb.length);
  } else expect(g).toEqual(w);
  expect({ ...got, [field]: null }).toEqual({ ...want, [field]: null });
}

let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

describe('JSON bodies with the query read straight into a Float32Array', () => {
  it('gives the bits JSON.parse and Float32Array.from give, in every way numbers are written', () => {
    const writers: ((x: number) => string)[] = [
      (x) => String(x),
      (x) => String(Math.fround(x)),
      (x) => x.toFixed(6),
      (x) => x.toExponential(3),
      (x) => x.toPrecision(9),
      (x) => x.toPrecision(17),
      (x) => x.toPrecision(21),
      (x) => String(Math.round(x * 1000)),
    ];
    for (let round = 0; round < 300; round++) {
      const scale = 10 ** Math.floor(rand() * 80 - 40);
      const write = writers[round % writers.length]!;
      const nums = Array.from({ length: 64 }, () => write((rand() * 2 - 1) * scale)).filter((t) => Number.isFinite(Number(t)));
      same(`{"query":[${nums.join(',')}],"top_k":10}`);
    }
  });

  it('decides exactly on the numbers next to a float32 rounding midpoint', () => {
    const f = new Float32Array(1);
    const u = new Uint32Array(f.buffer);
    const nums: string[] = [];
    for (let i = 0; i < 2000; i++) {
      f[0] = (rand() * 2 - 1) * 10 ** Math.floor(rand() * 20 - 10);
      const a = f[0]!;
      u[0] = u[0]! + 1;
      const b = f[0]!;
      const mid = (a + b) / 2; // exact in double: a tie between two float32 values
      nums.push(mid.toPrecision(21), (mid * (1 + 2 ** -52)).toPrecision(21), (mid * (1 - 2 ** -52)).toPrecision(21), String(mid));
    }
    same(`{"query":[${nums.join(',')}]}`);
  });

  it('keeps the edges: zeros, signs, subnormals, overflow, long digit strings, whitespace', () => {
    same('{"query":[0,-0,0.0,-0.0,0e5,1e-50,-1e-45,1.4e-45,1e-38,3.4028235e38,3.4028236e38,1e39,1.7976931348623157e308]}');
    same('{"query":[1,-1e400,1e400,1e-400,-1e-400]}');
    expect((parseJsonWithVector(Buffer.from('{"query":[0.5,-0,1e39]}'), 'query') as { query: unknown }).query).toEqual(Float32Array.of(0.5, -0, Infinity));
    same('{"query":[123456789012345678901234567890,0.000000000000000000000000000123456789,1E+2,1e-2,2.5E-3]}');
    same('{ "top_k" : 3 , "query" :\n [ 1 ,\t2.5 , -3 ]\r\n, "include_metadata": false }');
    same('{"query":[]}');
    same('{"query":[1,2],"query":[3,4,5]}');
  });

  it('leaves what is not a plain top-level number array to JSON.parse', () => {
    same('{"filters":{"query":[1,2]},"query":[3,4]}');
    same('{"query_text":"the \\"query\\": [1,2]","query":[5]}');
    same('{"a":"query","query":[7]}');
    same('{"query":[1,[2],3]}');
    same('{"query":[1,null,3]}');
    same('{"query":["1","2"]}');
    same('{"query":{"x":1}}');
    same('{"top_k":5}');
    same('{"nested":{"deep":[[1,2],{"query":[9]}]},"query":[0.5]}');
    for (const bad of ['{"query":[01]}', '{"query":[1.]}', '{"query":[.5]}', '{"query":[+1]}', '{"query":[NaN]}', '{"query":[1,]}', '{"query":[1 2]}', '{"query":[1e]}', '{"query":[-]}', '{"query":[1,2]']) {
      expect(() => parseJsonWithVector(Buffer.from(bad), 'query'), bad).toThrow(SyntaxError);
    }
  });

  it('reads multi-byte UTF-8 around the vector', () => {
    same('{"query_text":"café ünïcødé 日本語","query":[1.5,2.25],"filters":{"lang":"français"}}');
  });
});
