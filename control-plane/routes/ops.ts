/** Operational routes: health, Prometheus metrics, the OpenAPI document. */
import type { Engine } from '../../engine/index.js';
import type { Route, Router } from '../http/router.js';
import { json } from '../http/types.js';
import type { Metrics, MetricsSnapshot } from '../metrics.js';
import { openApiDocument } from '../schemas/openapi.js';

export interface OpsDeps {
  router: Router;
  engine: Engine;
  metrics: Metrics;
  /** What /metrics reads from the stores at each scrape. */
  snapshot: () => Promise<MetricsSnapshot>;
  adapter: () => string;
  /** Components of the OpenAPI document beyond the routes' own schemas. */
  schemas: Record<string, unknown>;
  /** SABLE_PUBLIC_URL: the document's server when set, else the Host the caller reached. */
  publicUrl?: string;
  /** Cluster mode: this node's view of itself (its id, roles, lease, replicas). */
  cluster?: () => Record<string, unknown>;
}

export function opsRoutes({ router, engine, metrics, snapshot, adapter, schemas, publicUrl, cluster }: OpsDeps): Route[] {
  return [
    {
      method: 'GET', path: '/healthz', auth: 'none', summary: 'Liveness',
      handler: async () => json(200, { status: 'ok', adapter: adapter(), node: process.version, isa: engine.isa, ...(cluster ? { cluster: cluster() } : {}) }),
    },
    {
      method: 'GET', path: '/metrics', auth: 'none', summary: 'Prometheus metrics',
      handler: async () => ({
        status: 200,
        headers: { 'content-type': 'text/plain; version=0.0.4' },
        body: metrics.render(await snapshot()),
      }),
    },
    {
      method: 'GET', path: '/openapi.json', auth: 'none', summary: 'This API as an OpenAPI 3.1 document',
      handler: async ({ req }) => json(200, openApiDocument(router.all(), { serverUrl: publicUrl ?? `http://${req.headers.host ?? 'localhost'}`, schemas })),
    },
  ];
}
