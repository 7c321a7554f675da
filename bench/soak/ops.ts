// The operation mix: which request a client sends next, built for bench/http's raw client.
//   search  POST /datasets/{id}/search, JSON {query, top_k}; every `filterEvery`-th query also
//           {advanced_filters: year >= 2020} (a typed i64 column, 20 % of rows pass)
//   upsert  POST /datasets/{id}/insert, msgpack (float32 binaries + metadata), `upsertBatch`
//           vectors with ids drawn from 0..n+churn-1: replacements of loaded vectors and
//           (re)inserts of churn ids
//   delete  DELETE /datasets/{id}/vectors {ids}: `deleteBatch` churn ids (n..n+churn-1), so the
//           loaded vectors are never deleted and the dataset stays between n and n+churn
//   read    in turn: GET /datasets/{id} (schema, schema_version), /stats, /index, /payload/{id}
//   status  in turn: GET /ingestion/jobs/{latest}, /ingestion/sources/{id},
//           /ingestion/jobs?dataset_id=..&limit=5, /ingestion/jobs/{latest}/files
import { mix32, type Rng } from '../../testkit/rng.js';
import { MSGPACK, packr } from '../http/bodies.js';
import { prepare, type Prepared } from '../http/client.js';
import { OPS, type OpKind, type SoakOptions } from './config.js';
import type { SoakData } from './data.js';

export interface Target {
  host: string;
  port: number;
  key: string;
  datasetId: string;
  docsDatasetId: string;
  sourceId: string;
  /** The newest ingestion job (the feeder moves it on). */
  jobId: () => string;
}

export interface OpRequest {
  kind: OpKind;
  /** The route, for error reports (ids left out). */
  route: string;
  req: Prepared;
  wantBody: boolean;
  /** A problem with a 2xx answer's body, or null. */
  check?: (body: Buffer) => string | null;
}

const LANGS = ['en', 'fr', 'de', 'es'];

/** The metadata of vector `id`: a function of the id, so a replacement keeps it. */
export function metadataOf(id: number): { year: number; lang: string } {
  const h = mix32(id);
  return { year: 2000 + (h % 25), lang: LANGS[(h >>> 8) % LANGS.length]! };
}

export const SCHEMA = [
  { name: 'year', type: 'i64' },
  { name: 'lang', type: 'string' },
];

export class OpMaker {
  private readonly cumulative: number[];
  private readonly total: number;
  private readonly searches: { req: Prepared; filtered: boolean }[];
  private readonly json: Record<string, string>;
  private readonly msgpack: Record<string, string>;
  private searchCount = 0;
  private readCount = 0;
  private statusCount = 0;

  constructor(
    private readonly t: Target,
    private readonly data: SoakData,
    private readonly o: SoakOptions,
  ) {
    let acc = 0;
    this.cumulative = OPS.map((k) => (acc += o.mix[k]));
    this.total = acc;
    this.json = { 'content-type': 'application/json', 'x-api-key': t.key };
    this.msgpack = { 'content-type': MSGPACK, accept: MSGPACK, 'x-api-key': t.key };
    // Search bodies are prebuilt (as a client holding its query vectors would): the load
    // generator's CPU stays small beside the service's on two shared cores.
    this.searches = [];
    for (let i = 0; i < data.nq; i++) {
      const filtered = o.filterEvery > 0 && i % o.filterEvery === o.filterEvery - 1;
      const body = {
        query: Array.from(data.queries.subarray(i * data.dim, (i + 1) * data.dim)),
        top_k: o.topK,
        ...(filtered ? { advanced_filters: [{ field: 'year', op: 'gte', value: 2020 }] } : {}),
      };
      this.searches.push({ req: this.prep('POST', `/datasets/${t.datasetId}/search`, this.json, Buffer.from(JSON.stringify(body))), filtered });
    }
  }

  private prep(method: string, path: string, headers: Record<string, string>, body: Buffer | null = null): Prepared {
    return prepare(this.t.host, this.t.port, method, path, headers, body);
  }

  pick(rng: Rng): OpKind {
    const x = rng.next() * this.total;
    for (let i = 0; i < OPS.length; i++) if (x < this.cumulative[i]!) return OPS[i]!;
    return OPS[OPS.length - 1]!;
  }

  make(kind: OpKind, rng: Rng): OpRequest {
    const ds = `/datasets/${this.t.datasetId}`;
    const { n, churn, topK } = { n: this.data.n, churn: this.o.churn, topK: this.o.topK };
    switch (kind) {
      case 'search': {
        const s = this.searches[rng.int(this.searches.length)]!;
        // Every 16th answer is decoded and checked; decoding them all would cost the client
        // more CPU than the check is worth.
        const sampled = this.searchCount++ % 16 === 0;
        return {
          kind,
          route: s.filtered ? 'POST /search (filtered)' : 'POST /search',
          req: s.req,
          wantBody: sampled,
          check: sampled ? (b) => checkSearch(b, topK) : undefined,
        };
      }
      case 'upsert': {
        const vectors = [];
        for (let i = 0; i < this.o.upsertBatch; i++) {
          const id = rng.int(n + churn);
          const row = rng.int(n);
          const off = this.data.base.byteOffset + row * this.data.dim * 4;
          vectors.push({ id, values: Buffer.from(this.data.base.buffer, off, this.data.dim * 4), metadata: metadataOf(id) });
        }
        const want = vectors.length;
        return {
          kind,
          route: 'POST /insert',
          req: this.prep('POST', `${ds}/insert`, this.msgpack, packr.pack({ vectors })),
          wantBody: true,
          check: (b) => {
            const r = packr.unpack(b) as { inserted?: number };
            return r.inserted === want ? null : `inserted ${r.inserted}, sent ${want}`;
          },
        };
      }
      case 'delete': {
        const ids = Array.from({ length: this.o.deleteBatch }, () => n + rng.int(churn));
        return { kind, route: 'DELETE /vectors', req: this.prep('DELETE', `${ds}/vectors`, this.json, Buffer.from(JSON.stringify({ ids }))), wantBody: true, check: checkJson };
      }
      case 'read': {
        const which = this.readCount++ % 4;
        const [route, path] =
          which === 0
            ? ['GET /datasets/{id}', ds]
            : which === 1
              ? ['GET /stats', `${ds}/stats`]
              : which === 2
                ? ['GET /index', `${ds}/index`]
                : ['GET /payload/{vectorId}', `${ds}/payload/${rng.int(n)}`];
        return {
          kind,
          route,
          req: this.prep('GET', path, { 'x-api-key': this.t.key }),
          wantBody: true,
          check: which === 0 ? (b) => (Array.isArray((JSON.parse(b.toString('utf8')) as { schema?: unknown }).schema) ? null : 'no schema in the dataset') : checkJson,
        };
      }
      case 'status': {
        const job = this.t.jobId();
        const which = this.statusCount++ % 4;
        const [route, path] =
          which === 0
            ? ['GET /ingestion/jobs/{id}', `/ingestion/jobs/${job}`]
            : which === 1
              ? ['GET /ingestion/sources/{id}', `/ingestion/sources/${this.t.sourceId}`]
              : which === 2
                ? ['GET /ingestion/jobs?dataset_id', `/ingestion/jobs?dataset_id=${this.t.docsDatasetId}&limit=5`]
                : ['GET /ingestion/jobs/{id}/files', `/ingestion/jobs/${job}/files?limit=20`];
        return { kind, route, req: this.prep('GET', path, { 'x-api-key': this.t.key }), wantBody: true, check: checkJson };
      }
    }
  }
}

function checkJson(b: Buffer): string | null {
  try {
    JSON.parse(b.toString('utf8'));
    return null;
  } catch {
    return 'answer is not JSON';
  }
}

function checkSearch(b: Buffer, topK: number): string | null {
  const r = JSON.parse(b.toString('utf8')) as { results?: unknown[] };
  return r.results?.length === topK ? null : `${r.results?.length ?? 'no'} results, top_k ${topK}`;
}
