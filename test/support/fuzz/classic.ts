// The classic hostile requests, written out: bodies that are not JSON or not UTF-8, nesting a
// parser recurses on, arrays of a million items, NaN, Infinity and -0 in vectors, integers past
// 2^53, strings of megabytes, content types a route does not take, bodies over the limit,
// requests whose bytes are not the HTTP they claim to be, traversal in paths, ids longer than a
// key, and runs resumed past their end. Where one answer alone is right, the case says which.
import { pack } from 'msgpackr';
import type { Pools } from './cases.js';
import { head } from './raw-http.js';
import type { Answer, Case, Runner } from './runner.js';
import { DIM, type ScratchB } from './seed.js';

export interface ClassicContext {
  run: Runner;
  pools: Pools;
  /** Sends a case (tracking what B creates). */
  send(c: Case): Promise<Answer | null>;
  /** Bytes of the big cases (huge strings), so a short run stays short. */
  huge: number;
  /** Organization B's resources made for these cases (the generated ones may have deleted the seeded ones). */
  b: ScratchB;
  /** The long run: every size of every case (the short one keeps one of each kind). */
  long: boolean;
}

const JSON_TYPE = 'application/json';

function make(route: string, path: string, key: string | null, body: string | Buffer | undefined, label: string, extra: Partial<Case> = {}, ctype = JSON_TYPE): Case {
  const [method] = route.split(' ');
  const headers: Record<string, string> = {};
  if (key) headers['x-api-key'] = key;
  if (body !== undefined && ctype) headers['content-type'] = ctype;
  return { route, method, path, headers, body, label, ...extra };
}

const vec = (v: number) => Array.from({ length: DIM }, () => v);

/** `{"a":{"a":...1...}}` or `[[...1...]]`, `depth` levels, as text (JSON.stringify would recurse). */
export function deep(depth: number, kind: 'object' | 'array'): string {
  return kind === 'object' ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + '1' + ']'.repeat(depth);
}

/** A msgpack body nested `depth` arrays deep (fixarray of one item). */
function deepMsgpack(depth: number): Buffer {
  return Buffer.concat([Buffer.from([0x81, 0xa7, ...Buffer.from('vectors')]), Buffer.alloc(depth, 0x91), Buffer.from([0x01])]);
}

function float32(values: number[]): Buffer {
  return Buffer.from(Float32Array.from(values).buffer);
}

export async function bodyEncodings(x: ClassicContext): Promise<void> {
  const { A, B } = x.pools.keys;
  const [dsA, textA] = x.pools.ids.A.datasetId;
  const dsB = x.b.vectors;
  const srcB = x.b.source;
  const schB = x.b.schedule;
  const targets: [string, string, string][] = [
    ['POST /datasets', '/datasets', B],
    ['POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A],
    ['POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B],
    ['PUT /org-secrets/{secretRef}', '/org-secrets/fuzz-json', B],
    ['POST /intelligence/query', '/intelligence/query', B],
    ['PATCH /ingestion/schedules/{scheduleId}', `/ingestion/schedules/${schB}`, B],
    ['PATCH /ingestion/sources/{sourceId}', `/ingestion/sources/${srcB}`, B],
    ['PATCH /datasets/{datasetId}/schema', `/datasets/${dsB}/schema`, B],
    ['POST /ingestion/sources/validate', '/ingestion/sources/validate', A],
  ];
  const invalid = [
    '{', '{"name":}', "{'name':'x'}", '{"name":"x",}', '[1,2', 'nul', '1e', '{"a":1}garbage', '\ufeff{"name":"x"}',
    '{"name":"x"}\u0000', '/*c*/{}', '{"a":"\\u00"}', '{"a":"\\x41"}', '{"a":01}', '{"a":.5}', '{"a":+1}', '{"a":NaN}',
    '{"a":Infinity}', '{"a":undefined}', '"', '{"a":"b"', '{{}}', '[]]', '{"query":[1,2,}', '{"query":[1,2]}x', '{"query":[1e]}',
  ];
  for (const [route, path, key] of targets) {
    for (const body of invalid) await x.send(make(route, path, key, body, 'invalid JSON', { expect: [400] }));
  }
  // Bytes that are not UTF-8, in values and keys: a replacement character or a 400, never a 500.
  const bad = [[0xff, 0xfe], [0xc0, 0xaf], [0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xfe, 0xff, 0x00]];
  for (const b of bad) {
    const bytes = Buffer.from(b);
    const inString = (before: string, after: string) => Buffer.concat([Buffer.from(before), bytes, Buffer.from(after)]);
    await x.send(make('POST /datasets', '/datasets', B, inString('{"name":"utf8-', '","dim":2}'), 'bad UTF-8 in a value'));
    await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${textA}/search`, A, inString('{"query_text":"keeper ', '","top_k":2}'), 'bad UTF-8 in query_text'));
    await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, inString(`{"query":${JSON.stringify(vec(0.5))},"filters":{"`, '":"x"}}'), 'bad UTF-8 in a key'));
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, inString('{"vectors":[{"id":"', `","values":${JSON.stringify(vec(1))}}]}`), 'bad UTF-8 in a string id'));
    await x.send(make('POST /ingestion/sources', '/ingestion/sources', B, inString('{"source_type":"file_upload","name":"', '","config":{}}'), 'bad UTF-8 in a name'));
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, Buffer.concat([Buffer.from([0x81, 0xa7]), Buffer.from('vectors'), Buffer.from([0x91, 0x82, 0xa2]), Buffer.from('id'), Buffer.from([0xa0 + bytes.length]), bytes, Buffer.from([0xa6]), Buffer.from('values'), Buffer.from([0xc4, 32]), float32(vec(1))]), 'bad UTF-8 in a msgpack string', {}, 'application/msgpack'));
  }
  await x.send(make('POST /datasets', '/datasets', B, Buffer.from('\ufeff{"name":"utf16","dim":2}', 'utf16le'), 'UTF-16 body', {}, 'application/json; charset=utf-16'));
}

export async function nesting(x: ClassicContext): Promise<void> {
  const { A, B } = x.pools.keys;
  const [dsA] = x.pools.ids.A.datasetId;
  const dsB = x.b.vectors;
  const textB = x.b.text;
  const srcB = x.b.source;
  const sessB = x.b.session;
  for (const depth of x.long ? [64, 65, 1_000, 10_000, 100_000, 1_000_000] : [64, 65, 100_000]) {
    for (const kind of ['object', 'array'] as const) {
      const d = deep(depth, kind);
      const label = `${kind}s nested ${depth} deep`;
      await x.send(make('POST /datasets', '/datasets', B, `{"name":"deep-${kind}-${depth}","dim":2,"metadata":{"deep":${d}}}`, label));
      await x.send(make('POST /ingestion/sources', '/ingestion/sources', B, `{"source_type":"file_upload","name":"deep","config":{},"metadata":{"deep":${d}}}`, label));
      await x.send(make('PATCH /ingestion/sources/{sourceId}', `/ingestion/sources/${srcB}`, B, `{"metadata":{"deep":${d}}}`, label));
      await x.send(make('POST /intelligence/sessions', '/intelligence/sessions', B, `{"title":"deep","metadata":{"deep":${d}}}`, label));
      await x.send(make('POST /intelligence/sessions/{sessionId}/messages', `/intelligence/sessions/${sessB}/messages`, B, `{"role":"user","content":"deep","metadata":{"deep":${d}}}`, label));
      await x.send(make('POST /ingestion/schedules', '/ingestion/schedules', B, `{"source_id":"${srcB}","dataset_id":"${textB}","cron":"0 0 1 1 *","enabled":false,"resume_state":{"deep":${d}}}`, label));
      await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, `{"query":${JSON.stringify(vec(0.5))},"filters":{"year":${d}}}`, label, { expect: [400] }));
      await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, `{"vectors":${d}}`, label, { expect: [400] }));
      await x.send(make('POST /datasets', '/datasets', B, d, `${label}, the whole body`, { expect: [400] }));
    }
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, deepMsgpack(depth), `msgpack nested ${depth} deep`, { expect: [400] }, 'application/msgpack'));
  }
}

export async function bigArrays(x: ClassicContext): Promise<void> {
  const { A, B, sessionB } = x.pools.keys;
  const [dsA, textA] = x.pools.ids.A.datasetId;
  const dsB = x.b.vectors;
  const million = 1_000_000;
  const list = (item: (i: number) => string) => `[${Array.from({ length: million }, (_, i) => item(i)).join(',')}]`;
  const label = 'an array of 10^6 items';
  // [route, path, key, body, expected statuses, in the short run too]
  const cases: [string, string, string, () => string, number[] | undefined, boolean][] = [
    ['POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, () => `{"query":${list(() => '0.5')}}`, [400], true],
    ['POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, () => `{"query":${JSON.stringify(vec(0.5))},"advanced_filters":[{"field":"year","op":"in","values":${list((i) => String(i))}}]}`, undefined, true],
    ['POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, () => `{"query":${JSON.stringify(vec(0.5))},"advanced_filters":${list((i) => `{"field":"year","op":"gte","value":${i % 50}}`)}}`, undefined, false],
    ['POST /datasets/{datasetId}/search', `/datasets/${textA}/search`, A, () => `{"query":${list(() => '1')},"query_text":"x"}`, [400], false],
    ['POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, () => `{"vectors":[{"id":1,"values":${list(() => '0')}}]}`, [400], true],
    ['POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, () => `{"vectors":${list((i) => `{"id":${i}}`)}}`, [400], false],
    ['DELETE /datasets/{datasetId}/vectors', `/datasets/${dsB}/vectors`, B, () => `{"ids":${list((i) => String(i + 100_000))}}`, undefined, true],
    ['DELETE /datasets/{datasetId}/vectors', `/datasets/${dsB}/vectors`, B, () => `{"ids":${list((i) => `"s${i}"`)}}`, undefined, false],
    ['POST /datasets/{datasetId}/embed', `/datasets/${textA}/embed`, A, () => `{"texts":${list(() => '"a"')}}`, [400], true],
    ['POST /datasets/{datasetId}/upload/init', `/datasets/${dsB}/upload/init`, B, () => `{"files":${list((i) => `{"name":"f${i}","size_bytes":1,"content_type":"x"}`)}}`, [400], false],
    ['POST /intelligence/query', '/intelligence/query', B, () => `{"query":"q","dataset_ids":${list(() => '"x"')}}`, [400], false],
    ['POST /ingestion/sources/validate', '/ingestion/sources/validate', A, () => `{"source_type":"web","config":{"start_urls":${list(() => '"http://127.0.0.1:9/"')}}}`, undefined, false],
  ];
  for (const [route, path, key, body, expect, short] of cases) if (x.long || short) await x.send(make(route, path, key, body(), label, { expect }));
  await x.send({ ...make('POST /sources/batch-info', '/sources/batch-info', null, `{"source_paths":${list(() => '"gdrive://x"')}}`, label, { expect: [400] }), headers: { authorization: `Bearer ${sessionB}`, 'content-type': JSON_TYPE } });
  if (!x.long) return;
  const created = await x.send(make('POST /datasets', '/datasets', B, `{"name":"wide-metadata","dim":2,"metadata":{${Array.from({ length: million }, (_, i) => `"k${i}":${i}`).join(',')}}}`, 'an object of 10^6 keys'));
  if (created?.status === 201) await x.send(make('DELETE /datasets/{datasetId}', `/datasets/${created.json.id}`, B, undefined, 'cleanup of the wide dataset'));
}

export async function specialNumbers(x: ClassicContext): Promise<{ scoresOk: boolean }> {
  const { A, B } = x.pools.keys;
  const [dsA] = x.pools.ids.A.datasetId;
  const dsB = x.b.vectors;
  const raw = (v: string) => `[${Array.from({ length: DIM }, (_, i) => (i === 0 ? v : '0.5')).join(',')}]`;
  for (const v of ['NaN', 'Infinity', '-Infinity', '1e400', '-1e400', '1e39', '-3.5e38', '1e-50', '5e-324', '-0', '0x1', '+1', '.5', '01', '"1"', 'null', 'true']) {
    await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, `{"query":${raw(v)},"top_k":3}`, `${v} in a query vector`));
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, `{"vectors":[{"id":900001,"values":${raw(v)}}]}`, `${v} in an inserted vector`));
  }
  for (const v of [NaN, Infinity, -Infinity, -0, 1e-45, 3.4e38]) {
    const q = float32([v, ...vec(0.5).slice(1)]);
    await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, pack({ query: q, top_k: 3 }), `${v} in a float32 msgpack query`, {}, 'application/msgpack'));
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, pack({ vectors: [{ id: 900002, values: q }] }), `${v} in a float32 msgpack vector`, {}, 'application/msgpack'));
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, pack({ vectors: [{ id: 900003, values: [v, ...vec(0.5).slice(1)] }] }), `${v} in a float64 msgpack vector`, {}, 'application/msgpack'));
  }
  await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, pack({ query: Buffer.alloc(7) }), 'a float32 binary of 7 bytes', { expect: [400] }, 'application/msgpack'));
  await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, `{"query":${JSON.stringify(vec(0))},"top_k":3}`, 'a zero query on a cosine dataset'));
  await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, `{"vectors":[{"id":900004,"values":${JSON.stringify(vec(0))}}]}`, 'a zero vector'));
  for (const id of ['9007199254740993', '18446744073709551616', '1e20', '-1', '1.5', '-0', '1e400', '"18446744073709551616"']) {
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, `{"vectors":[{"id":${id},"values":${JSON.stringify(vec(2))}}]}`, `id ${id}`));
    await x.send(make('DELETE /datasets/{datasetId}/vectors', `/datasets/${dsB}/vectors`, B, `{"ids":[${id}]}`, `id ${id}`));
    await x.send(make('GET /datasets/{datasetId}/payload/{vectorId}', `/datasets/${dsA}/payload/${encodeURIComponent(id)}`, A, undefined, `id ${id}`));
  }
  for (const [field, value] of [['top_k', '1e20'], ['top_k', '9007199254740993'], ['top_k', '-0'], ['nprobe_override', '9007199254740991'], ['rerank_depth_override', '1e300']] as const) {
    await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, `{"query":${JSON.stringify(vec(0.5))},"${field}":${value}}`, `${field} ${value}`));
  }
  for (const q of ['limit=1e400', 'limit=9007199254740993', 'offset=9007199254740993', 'offset=-1', 'limit=0x10']) {
    await x.send(make('GET /datasets', `/datasets?${q}`, A, undefined, q));
    await x.send(make('GET /ingestion/jobs', `/ingestion/jobs?${q}`, A, undefined, q));
    await x.send(make('GET /datasets/{datasetId}/documents', `/datasets/${x.pools.ids.A.datasetId[1]}/documents?${q}`, A, undefined, q));
  }
  await x.send(make('POST /datasets', '/datasets', B, '{"name":"big-dim","dim":9007199254740993}', 'dim past 2^53', { expect: [400] }));
  // A dimension the engine refuses, given as the embedding's: it was accepted (201) and the
  // dataset's provisioning then failed in the background, for ever.
  await x.send(make('POST /datasets', '/datasets', B, '{"name":"big-embedding-dim","embedding":{"provider":"openai-compatible","model":"m","dim":1000000000}}', 'embedding.dim past the engine', { expect: [400] }));
  // Fractions where the schema takes any number: a deadline of 13.7 s once left its run running for ever.
  for (const deadline of [5.0000001, 13.7, 599.9999]) {
    await x.send(make('POST /intelligence/query', '/intelligence/query', B, JSON.stringify({ query: 'how many steps?', dataset_ids: [x.b.text], stream: false, deadline_seconds: deadline }), `deadline_seconds ${deadline}`, { expect: [200] }));
  }
  // Extreme tuning on B's dataset, then a rebuild and a search: the engine must refuse or cope.
  // Knobs past the engine's range were stored, and every later search of the dataset failed
  // (the first one ended the process).
  for (const body of ['{"nlist":9007199254740991}', '{"ef_construction":1e300}', '{"nprobe_min":9007199254740991}', '{"nprobe_max":1000001}']) {
    await x.send(make('POST /datasets/{datasetId}/defaults/tuning', `/datasets/${dsB}/defaults/tuning`, B, body, `tuning ${body}`, { expect: [400] }));
  }
  await x.send(make('PUT /datasets/{datasetId}/sla', `/datasets/${dsB}/sla`, B, '{"target_p99_us":1e300,"min_nprobe":9007199254740991,"max_beam_width":9007199254740991}', 'an SLA past 2^53', { expect: [400] }));
  await x.send(make('POST /datasets', '/datasets', B, '{"name":"big-tuning","dim":2,"tuning":{"nlist":2000000000}}', 'a dataset tuned past the range', { expect: [400] }));
  await x.send(make('PUT /datasets/{datasetId}/promotion-policy', `/datasets/${dsB}/promotion-policy`, B, '{"max_buffer_vectors":9007199254740991,"max_buffer_age_ms":9007199254740991}', 'a promotion policy past 2^53'));
  await x.send(make('POST /datasets/{datasetId}/index/rebuild', `/datasets/${dsB}/index/rebuild`, B, undefined, 'a rebuild with extreme tuning'));
  await new Promise((r) => setTimeout(r, 500));
  // NaN must not have reached the stored vectors: B's searches still score with numbers.
  const after = await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsB}/search`, B, `{"query":${JSON.stringify(vec(0.5))},"top_k":50}`, 'a search after the special numbers', { expect: [200] }));
  const zero = await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, `{"query":${JSON.stringify(vec(0.25))},"top_k":30}`, 'a search of A after the special numbers', { expect: [200] }));
  const numeric = (a: Answer | null) => !!a && Array.isArray(a.json?.results) && a.json.results.every((h: { score: unknown }) => typeof h.score === 'number' && Number.isFinite(h.score));
  return { scoresOk: numeric(after) && numeric(zero) };
}

export async function hugeStrings(x: ClassicContext): Promise<void> {
  const { A, B } = x.pools.keys;
  const [dsA, textA] = x.pools.ids.A.datasetId;
  const textB = x.b.text;
  const words = 'the keeper climbs the steps '.repeat(Math.ceil(x.huge / 28)).slice(0, x.huge);
  const s = JSON.stringify(words);
  const label = `a string of ${(x.huge / 2 ** 20).toFixed(1)} MiB`;
  await x.send(make('POST /datasets', '/datasets', B, `{"name":${s},"dim":2}`, label, { expect: [400] }));
  await x.send(make('PUT /org-secrets/{secretRef}', '/org-secrets/fuzz-huge', B, `{"value":${s}}`, label));
  await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${textA}/search`, A, `{"query_text":${s},"top_k":2}`, `${label} as query_text`, { expect: [400] }));
  await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${textA}/search`, A, `{"query":${JSON.stringify(Array(384).fill(0.1))},"sparse_query":${s},"hybrid":true,"top_k":2}`, `${label} as sparse_query`));
  await x.send(make('POST /datasets/{datasetId}/embed', `/datasets/${textA}/embed`, A, `{"text":${s}}`, `${label} to embed`, { expect: [400] }));
  await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${textB}/insert`, B, `{"vectors":[{"id":1,"metadata":{"text":${s}}}]}`, `${label} as metadata.text`, { expect: [400] }));
  await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, `{"query":${JSON.stringify(vec(0.5))},"filters":{"lang":${s}}}`, `${label} as a filter value`));
  await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, `{"query":${JSON.stringify(vec(0.5))},"advanced_filters":[{"field":${s},"op":"eq","value":1}]}`, `${label} as a filter field`));
  await x.send(make('POST /ingestion/sources/validate', '/ingestion/sources/validate', A, `{"source_type":"s3","config":{"bucket":${s},"access_key_id":"a","secret_access_key":"b","endpoint":"http://127.0.0.1:9"}}`, `${label} as a bucket`));
  await x.send(make('POST /intelligence/sessions', '/intelligence/sessions', B, `{"title":${s}}`, label, { expect: [400] }));
  await x.send(make('POST /intelligence/query', '/intelligence/query', B, `{"query":"keeper","dataset_ids":["${textB}"],"stream":false,"conversation_history":${JSON.stringify(Array.from({ length: 100 }, () => ({ role: 'user', content: 'steps '.repeat(5000) })))}}`, 'a conversation of 100 x 30,000 characters'));
}

export async function contentTypes(x: ClassicContext): Promise<void> {
  const { A, B } = x.pools.keys;
  const [dsA] = x.pools.ids.A.datasetId;
  const dsB = x.b.vectors;
  const insert = JSON.stringify({ vectors: [{ id: 5000, values: vec(1) }] });
  const search = JSON.stringify({ query: vec(0.5), top_k: 2 });
  for (const ctype of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json, text/plain', '', 'application/jsonx', 'json', 'application/json;', ' application/json', 'application/JSON; charset=latin1']) {
    await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, insert, `content type '${ctype}'`, {}, ctype));
    await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, search, `content type '${ctype}'`, {}, ctype));
    await x.send(make('POST /datasets', '/datasets', B, '{"name":"ctype","dim":2}', `content type '${ctype}'`, {}, ctype));
  }
  await x.send(make('POST /datasets', '/datasets', B, pack({ name: 'mp', dim: 2 }), 'msgpack on a JSON-only route', { expect: [415] }, 'application/msgpack'));
  await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, Buffer.from([0xc1, 0xff, 0x00]), 'msgpack that is not msgpack', { expect: [400] }, 'application/msgpack'));
  await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, Buffer.from(insert), 'JSON sent as msgpack', {}, 'application/msgpack'));
  await x.send(make('POST /datasets/{datasetId}/search', `/datasets/${dsA}/search`, A, pack([1, 2, 3]), 'a msgpack array as the body', { expect: [400] }, 'application/msgpack'));
  await x.send(make('POST /datasets/{datasetId}/insert', `/datasets/${dsB}/insert`, B, pack({ vectors: ['<script>', 1, true, [1, 2]] }), 'msgpack vectors that are not objects', { expect: [400] }, 'application/msgpack'));
  await x.send(make('POST /datasets/{datasetId}/upload', `/datasets/${dsB}/upload`, B, insert, 'JSON to the multipart route', { expect: [415] }));
  await x.send(make('POST /datasets/{datasetId}/upload', `/datasets/${dsB}/upload`, B, 'nothing', 'multipart without a boundary', {}, 'multipart/form-data'));
  await x.send(make('POST /datasets/{datasetId}/upload', `/datasets/${dsB}/upload`, B, '--x\r\nContent-Disposition: form-data; name="files"; filename="a.parquet"\r\n\r\nPAR1', 'a multipart body cut short', {}, 'multipart/form-data; boundary=x'));
  await x.send(make('POST /datasets/{datasetId}/upload', `/datasets/${dsB}/upload`, B, '--y\r\n\r\n--y--\r\n', 'a multipart body with another boundary', {}, 'multipart/form-data; boundary=x'));
  await x.send(make('POST /datasets/{datasetId}/upload', `/datasets/${dsB}/upload`, B, '--x\r\nContent-Disposition: form-data; name="validate_only"\r\n\r\ntrue\r\n--x--\r\n', 'a multipart body without files', { expect: [400] }, 'multipart/form-data; boundary=x'));
}

/** Bodies over the limit and lengths that lie, on the main listener and the upload listener. */
export async function transport(x: ClassicContext, limit: number): Promise<void> {
  const { A, B } = x.pools.keys;
  const dsB = x.b.vectors;
  const [dsA] = x.pools.ids.A.datasetId;
  for (const listener of ['main', 'upload'] as const) {
    const route = 'POST /datasets/{datasetId}/insert';
    const path = `/datasets/${dsB}/insert`;
    const c = (label: string, expect?: number[]): Case => ({ route, method: 'POST', path, headers: {}, label: `${label} (${listener})`, listener, expect });
    const base = { Host: '127.0.0.1', 'X-API-Key': B, 'Content-Type': JSON_TYPE };
    await x.run.sendRaw(c('a declared body over the limit', [413]), [head('POST', path, { ...base, 'Content-Length': limit + 1, Connection: 'close' })]);
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const chunks = Array.from({ length: Math.ceil(limit / chunk.length) + 1 }, () => Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    await x.run.sendRaw(c('a chunked body over the limit', [413]), [head('POST', path, { ...base, 'Transfer-Encoding': 'chunked', Connection: 'close' }), ...chunks], { mayClose: true });
    const body = JSON.stringify({ vectors: [{ id: 7000, values: vec(1) }] });
    for (const length of ['-1', 'abc', '1e3', '0x10', ' 5', '5 5', '99999999999999999999', String(body.length - 5)]) {
      await x.run.sendRaw(c(`Content-Length '${length}'`), [head('POST', path, { ...base, 'Content-Length': length, Connection: 'close' }), body], { mayClose: true, timeoutMs: 300 });
    }
    await x.run.sendRaw(c('two Content-Length headers'), [`POST ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${B}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`], { mayClose: true, timeoutMs: 300 });
    await x.run.sendRaw(c('Content-Length and Transfer-Encoding'), [head('POST', path, { ...base, 'Content-Length': 3, 'Transfer-Encoding': 'chunked', Connection: 'close' }), `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`], { mayClose: true, timeoutMs: 300 });
    for (const size of ['zz', 'ffffffffffffffffff', '-1', '1;ext=\u0000']) {
      await x.run.sendRaw(c(`chunk size '${size}'`), [head('POST', path, { ...base, 'Transfer-Encoding': 'chunked', Connection: 'close' }), `${size}\r\n${body}\r\n0\r\n\r\n`], { mayClose: true, timeoutMs: 300 });
    }
    await x.run.sendRaw(c('Transfer-Encoding gzip'), [head('POST', path, { ...base, 'Transfer-Encoding': 'gzip', Connection: 'close' }), body], { mayClose: true, timeoutMs: 300 });
    // A body that stops halfway: the client waits 1 s and gives up; the service must carry on.
    await x.run.sendRaw(c('a body that stops halfway'), [head('POST', path, { ...base, 'Content-Length': body.length * 2 }), body], { givesUp: true, timeoutMs: 1000 });
    // The same on the streamed routes: an upload and a multipart body that stop halfway.
    const init = await x.send(make('POST /datasets/{datasetId}/upload/init', `/datasets/${dsB}/upload/init`, B, JSON.stringify({ files: [{ name: 'half.parquet', size_bytes: 1 << 20, content_type: 'application/vnd.apache.parquet' }] }), 'an upload to leave halfway', { expect: [200] }));
    if (init?.json?.uploads) {
      const target = new URL(init.json.uploads[0].upload_url).pathname;
      for (const wait of [0, 50]) {
        await x.run.sendRaw({ route: 'PUT /uploads/{token}', method: 'PUT', path: target, headers: {}, label: `an upload that stops halfway (${listener}, leaves after ${wait} ms)`, listener }, [head('PUT', target, { Host: 'x', 'Content-Type': 'application/vnd.apache.parquet', 'Content-Length': 1 << 20 }), Buffer.alloc(1000)], { givesUp: true, timeoutMs: wait + 1 });
      }
    }
    const upload = `/datasets/${dsB}/upload`;
    for (const wait of [0, 50]) {
      await x.run.sendRaw({ route: 'POST /datasets/{datasetId}/upload', method: 'POST', path: upload, headers: {}, label: `a multipart body that stops halfway (${listener}, leaves after ${wait} ms)`, listener }, [head('POST', upload, { Host: 'x', 'X-API-Key': B, 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': 1 << 20 }), '--x\r\nContent-Disposition: form-data; name="files"; filename="a.parquet"\r\n\r\nPAR1'], { givesUp: true, timeoutMs: wait + 1 });
    }
    // `answered`: where the request is valid HTTP/1.1 that must get an answer. uWS closes the
    // connection on methods it does not know (and leaves HTTP/1.0 unanswered): its parser, not ours.
    const raw = (label: string, bytes: string | Buffer, answered: 'both' | 'node' | 'none' = 'none') =>
      x.run.sendRaw({ route: 'transport', method: '-', path: '-', headers: {}, label: `${label} (${listener})`, listener }, [bytes], { mayClose: answered === 'none' || (answered === 'node' && listener === 'main'), timeoutMs: answered === 'none' ? 300 : 3000 });
    await raw('header injection: two keys', `GET /datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\r\nX-API-Key: ${B}\r\nConnection: close\r\n\r\n`, 'both');
    await raw('a bare LF in a header', `GET /datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\nX-Other: 1\r\nConnection: close\r\n\r\n`);
    await raw('a NUL in a header', `GET /datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\u0000x\r\nConnection: close\r\n\r\n`);
    await raw('a folded header', `GET /datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A.slice(0, 20)}\r\n ${A.slice(20)}\r\nConnection: close\r\n\r\n`);
    await raw('a header name with a space', `GET /datasets HTTP/1.1\r\nHost: x\r\nX API-Key: ${A}\r\nConnection: close\r\n\r\n`);
    await raw('a header line without a colon', `GET /datasets HTTP/1.1\r\nHost: x\r\nnonsense\r\nConnection: close\r\n\r\n`);
    await raw('10,000 headers', `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 10_000 }, (_, i) => `X-H${i}: ${i}\r\n`).join('')}Connection: close\r\n\r\n`);
    await raw('a header of 100 KB', `GET /datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${'k'.repeat(100_000)}\r\nConnection: close\r\n\r\n`);
    await raw('a key of latin-1 bytes', Buffer.concat([Buffer.from('GET /datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: '), Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), Buffer.from('\r\nConnection: close\r\n\r\n')]));
    await raw('no Host header', 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n', 'node');
    await raw('HTTP/1.0', 'GET /healthz HTTP/1.0\r\n\r\n', 'node');
    await raw('an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    await raw('an unknown method', 'FOO /datasets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 'node');
    await raw('a lower-case method', `get /datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\r\nConnection: close\r\n\r\n`, 'node');
    await raw('TRACE', 'TRACE /datasets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 'both');
    await raw('a request line of garbage', Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]));
    await raw('a GET with a body', `GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`, 'both');
    await raw('a URL of 100 KB', `GET /datasets?limit=${'9'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\r\nConnection: close\r\n\r\n`);
    await raw('an absolute-form target', `GET http://127.0.0.1:9/datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\r\nConnection: close\r\n\r\n`);
    await raw('an asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await raw('a query with CR LF', `GET /connections?provider=%0D%0AX-Injected:%201 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\r\nConnection: close\r\n\r\n`, 'both');
  }
  void dsA;
}

/** Runs resumed at, past and far past their last chunk: 204 (an EventSource stops), never a stream that waits for ever. */
export async function resumes(x: ClassicContext): Promise<void> {
  const { B } = x.pools.keys;
  const asked = await x.send(make('POST /intelligence/query', '/intelligence/query', B, JSON.stringify({ query: 'how many steps?', dataset_ids: [x.b.text], stream: false, run_id: 'fuzz-resume' }), 'a run to resume', { expect: [200] }));
  const runId = asked?.json?.metadata?.run_id ?? 'fuzz-resume';
  const last = (await x.send(make('GET /intelligence/runs/{runId}', `/intelligence/runs/${runId}`, B, undefined, 'the run', { expect: [200] })))?.json?.last_seq ?? 0;
  for (const after of [0, last - 1, last, last + 1, 100_000]) {
    if (after < 0) continue;
    await x.send({ ...make('GET /intelligence/runs/{runId}/events', `/intelligence/runs/${runId}/events?after=${after}`, B, undefined, `SSE after ${after} of ${last}`, { expect: [after >= last ? 204 : 200] }), headers: { 'x-api-key': B, accept: 'text/event-stream' } });
    await x.send({ ...make('POST /intelligence/query', '/intelligence/query', B, JSON.stringify({ query: 'how many steps?', dataset_ids: [x.b.text], run_id: runId }), `re-attached after ${after} of ${last}`, { expect: [200] }), headers: { 'x-api-key': B, 'content-type': JSON_TYPE, 'last-event-id': String(after) } });
  }
}

/** Ids longer than a store's key can hold, in paths and in bodies: a 404 or a 400, never a 500. */
export async function longIds(x: ClassicContext): Promise<void> {
  const { A, B } = x.pools.keys;
  const [dsA, textA] = x.pools.ids.A.datasetId;
  for (const id of ['a'.repeat(1536), 'a'.repeat(1537), 'a'.repeat(5000), encodeURIComponent('é'.repeat(1000))]) {
    const label = `an id of ${id.length} characters`;
    for (const [route, path] of [
      ['GET /datasets/{datasetId}', `/datasets/${id}`], ['GET /ingestion/jobs/{jobId}/statistics', `/ingestion/jobs/${id}/statistics`],
      ['GET /datasets/{datasetId}/documents/{documentId}/download', `/datasets/${textA}/documents/${id}/download`],
      ['GET /datasets/{datasetId}/payload/{vectorId}', `/datasets/${dsA}/payload/${id}`], ['GET /intelligence/sessions/{sessionId}', `/intelligence/sessions/${id}`],
      ['GET /ingestion/sources/{sourceId}', `/ingestion/sources/${id}`], ['GET /connections/{connectionId}', `/connections/${id}`],
      ['GET /intelligence/runs/{runId}', `/intelligence/runs/${id}`], ['GET /ingestion/source-types/{type}', `/ingestion/source-types/${id}`],
    ]) await x.send(make(route, path, A, undefined, label, { expect: [400, 404] }));
    const raw = decodeURIComponent(id);
    await x.send(make('POST /datasets/{datasetId}/upload/complete', `/datasets/${x.b.vectors}/upload/complete`, B, JSON.stringify({ job_id: raw, file_ids: [raw] }), label, { expect: [400, 404] }));
    await x.send(make('POST /ingestion/sources/{sourceId}/upload/complete', `/ingestion/sources/${x.b.source}/upload/complete`, B, JSON.stringify({ job_id: raw, file_ids: [] }), label, { expect: [400, 404] }));
  }
}

/** Dot segments and encoded separators in paths: nothing outside the API is ever served. */
export async function traversal(x: ClassicContext, secrets: string[]): Promise<void> {
  const { A } = x.pools.keys;
  const [, textA] = x.pools.ids.A.datasetId;
  const [docA] = x.pools.ids.A.documentId;
  const targets = [
    ['GET', '/../../etc/passwd'], ['GET', '/datasets/../admin.key'], ['GET', '/%2e%2e/%2e%2e/admin.key'], ['GET', '/datasets/%2e%2e%2fadmin.key'],
    ['GET', `/datasets/${textA}/documents/..%2F..%2F..%2Fadmin.key/download`], ['GET', `/datasets/${textA}/documents/${docA}/..%2F..%2Fadmin.key`],
    ['GET', `/datasets/${textA}/documents/../../../admin.key/download`], ['GET', '/datasets\\..\\admin.key'], ['GET', '/datasets/%00'],
    ['GET', '/%00'], ['GET', '//datasets'], ['GET', '/datasets/./'], ['GET', '/v1/datasets/../../admin.key'], ['GET', '/datasets?limit=1#frag'],
    ['PUT', '/uploads/..%2F..%2Fadmin.key'], ['PUT', '/uploads/../../admin.key'], ['GET', '/uploads/..%2F..%2Fmaster.key'],
    ['GET', `/datasets/${textA}/documents/%2e%2e%2f%2e%2e%2fmaster.key/download`], ['GET', '/ingestion/source-types/..%2F..%2F..%2Fetc%2Fpasswd'],
  ];
  for (const listener of ['main', 'upload'] as const) {
    for (const [method, path] of targets) {
      const out = await x.run.sendRaw({ route: 'traversal', method, path, headers: {}, label: `${method} ${path} (${listener})`, listener }, [`${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${A}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`], { mayClose: true, timeoutMs: 300 });
      if (secrets.some((s) => out.body.includes(s))) x.run.report.problem('traversal', `${method} ${path} answered a secret of the data directory`, out.body.slice(0, 200));
    }
  }
}
