/** Operational routes: health, Prometheus metrics, the OpenAPI document. */
import type { Engine } from '../../engine/index.js';
import type { Route, Router } from '../http/router.js';
import { json } from '../http/types.js';
import type { Metrics } from '../metrics.js';
import { openApiDocument } from '../schemas/openapi.js';

export function opsRoutes(router: Router, engine: Engine, metrics: Metrics, adapter: () => string): Route[] {
  return [
    {
      method: 'GET', path: '/healthz', auth: 'none', summary: 'Liveness',
      handler: async () => json(200, { status: 'ok', adapter: adapter(), isa: engine.isa }),
    },
    {
      method: 'GET', path: '/metrics', auth: 'none', summary: 'Prometheus metrics',
      handler: async () => ({
        status: 200,
        headers: { 'content-type': 'text/plain; version=0.0.4' },
        body: metrics.render(engine.listDatasets().map((d) => [d.name, d.stats().vector_count])),
      }),
    },
    {
      method: 'GET', path: '/openapi.json', auth: 'none', summary: 'This API as an OpenAPI 3.1 document',
      handler: async () => json(200, openApiDocument(router.all())),
    },
  ];
}
