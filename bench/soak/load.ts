// Filling the soak's dataset before the clients start: the vectors go through the insert route
// in msgpack batches of 1000 (float32 binaries and their metadata), 2 in flight, as bench:http
// loads its data; then the growing partition is sealed into one indexed partition and the
// promotion policy the dataset was created with is put back, so the soak runs on the service's
// own defaults.
import { MSGPACK, packr } from '../http/bodies.js';
import { openConns, prepare } from '../http/client.js';
import type { SoakData } from './data.js';
import { metadataOf } from './ops.js';

/** bench:http's load policy: one growing partition takes every vector, sealed once at the end. */
const LOAD_POLICY = { max_buffer_vectors: 200_000, max_buffer_age_ms: 3_600_000 };

export type Api = (method: string, path: string, body?: unknown) => Promise<any>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LoadFigures {
  insertSeconds: number;
  vectorsPerSecond: number;
  sealSeconds: number;
  /** The promotion policy the soak ran with (the dataset's default). */
  policy: { max_buffer_vectors: number; max_buffer_age_ms: number };
}

export async function loadDataset(api: Api, host: string, port: number, key: string, datasetId: string, data: SoakData): Promise<LoadFigures> {
  const policy = await api('GET', `/datasets/${datasetId}/promotion-policy`);
  await api('PUT', `/datasets/${datasetId}/promotion-policy`, LOAD_POLICY);
  const batch = 1000;
  const headers = { 'content-type': MSGPACK, accept: MSGPACK, 'x-api-key': key };
  const { conns, close } = await openConns('net', host, port, 2);
  let next = 0;
  const t0 = performance.now();
  try {
    await Promise.all(
      conns.map(async (conn) => {
        for (;;) {
          const first = next;
          next += batch;
          if (first >= data.n) return;
          const count = Math.min(batch, data.n - first);
          const vectors = [];
          for (let i = 0; i < count; i++) {
            const off = data.base.byteOffset + (first + i) * data.dim * 4;
            vectors.push({ id: first + i, values: Buffer.from(data.base.buffer, off, data.dim * 4), metadata: metadataOf(first + i) });
          }
          const req = prepare(host, port, 'POST', `/datasets/${datasetId}/insert`, headers, packr.pack({ vectors }));
          const { status, body } = await new Promise<{ status: number; body: Buffer | null }>((resolve, reject) =>
            conn.send(req, true, (err, status, body) => (err ? reject(err) : resolve({ status, body }))),
          );
          const inserted = status === 200 && body ? (packr.unpack(body) as { inserted?: number }).inserted : undefined;
          if (inserted !== count) throw new Error(`insert of ids ${first}..${first + count - 1}: status ${status}, ${body?.toString('utf8').slice(0, 300)}`);
        }
      }),
    );
  } finally {
    close();
  }
  const insertSeconds = (performance.now() - t0) / 1000;
  const s0 = performance.now();
  await api('PUT', `/datasets/${datasetId}/promotion-policy`, { max_buffer_age_ms: 1 });
  for (let last = ''; ; await sleep(250)) {
    const index = await api('GET', `/datasets/${datasetId}/index`);
    const stats = await api('GET', `/datasets/${datasetId}/stats`);
    if (index.status === 'ready' && stats.partitions === 1 && stats.vector_count === data.n) break;
    last = `index ${JSON.stringify(index)}, ${stats.partitions} partitions, ${stats.vector_count} vectors`;
    if (performance.now() - s0 > 15 * 60_000) throw new Error(`the dataset did not become one ready partition: ${last}`);
  }
  const sealSeconds = (performance.now() - s0) / 1000;
  await api('PUT', `/datasets/${datasetId}/promotion-policy`, policy);
  return { insertSeconds, vectorsPerSecond: data.n / insertSeconds, sealSeconds, policy };
}
