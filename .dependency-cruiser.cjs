/**
 * The layer rules of the tree, checked by `npm test` (npm run check:layers). Layers import
 * downward only:
 *
 *   control-plane -> {answer, ingest, bulk} -> {retrieval, jobs} -> {catalog, objects}
 *     catalog -> engine -> native        objects -> outbound
 *   control-plane -> cluster -> {answer, retrieval, jobs (their ports: runs, sharded vectors, the job queue), catalog, objects, outbound}
 *
 * with errors/ and contract/ (the schema toolkit and ajv: TypeBox helpers, validation, shared
 * wire shapes) below everything, and client/ (the HTTP client) beside them, importing them as
 * types only (the `sable tune` command of control-plane calls a service through it). The use-cases (answer, ingest, bulk) are peers: ingest may start jobs, none calls
 * another. Nothing else imports control-plane; engine internals are reached through
 * engine/index.ts only; the native addon is loaded by engine/native.ts only (a test checks that,
 * as the addon is not an import). Work on other threads keeps a naming rule: a piscina pool
 * lives in a `*-pool.ts` file and its thread's entry point in a `*-worker.ts` file, imported by
 * nothing (its pool names it by URL; types may be shared). The dashboard (dashboard/) is
 * browser code outside the layers: it reaches the service through client/ only, and nothing
 * imports it (the service serves its build as files).
 */
const LAYERS = {
  errors: [],
  contract: ['errors'],
  engine: ['errors'],
  outbound: ['errors'],
  objects: ['errors', 'contract', 'outbound'],
  catalog: ['errors', 'contract', 'engine'],
  retrieval: ['errors', 'contract', 'engine', 'outbound', 'catalog'],
  jobs: ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog'],
  bulk: ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog', 'jobs'],
  ingest: ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog', 'retrieval', 'jobs'],
  answer: ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog', 'retrieval'],
  // Cluster mode: membership, leases, the catalog and per-shard logs on PostgreSQL
  // (outbound/postgres); it implements retrieval's port of sharded vectors (retrieval/sharded.ts)
  // the job queue of jobs/queue.ts, and where answer/ finds other nodes' runs (answer/runs/run-view.ts).
  cluster: ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog', 'retrieval', 'jobs', 'answer'],
  // `sable tune` talks to a running service as any client does, through client/.
  'control-plane': ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog', 'retrieval', 'jobs', 'bulk', 'ingest', 'answer', 'cluster', 'client'],
  // The HTTP client shares the service's types, never its code (rule client-types-only below).
  client: ['errors', 'contract', 'engine', 'outbound', 'objects', 'catalog', 'retrieval', 'jobs', 'bulk', 'ingest', 'answer', 'cluster', 'control-plane'],
};
const ALL = Object.keys(LAYERS);

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  comment: `${layer}/ may import ${allowed.length ? allowed.join(', ') : 'no other layer'} (and itself)`,
  severity: 'error',
  from: { path: `^${layer}/` },
  to: { path: `^(${ALL.filter((l) => l !== layer && !allowed.includes(l)).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'engine-through-its-index',
      comment: 'outside engine/, the engine is reached through engine/index.ts only',
      severity: 'error',
      from: { path: '^(?!engine/)', pathNot: '^(bench|test)/' },
      to: { path: '^engine/', pathNot: '^engine/index\\.ts$' },
    },
    {
      name: 'client-types-only',
      comment: 'client/ runs in browsers and other services: it imports the other layers as types only',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: `^(${ALL.filter((l) => l !== 'client').join('|')})/`, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'dashboard-through-the-client',
      comment: 'dashboard/ runs in browsers: it imports its own files, client/ and packages, nothing else of the tree',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: { pathNot: '^(dashboard|client|node_modules)/' },
    },
    {
      name: 'nothing-imports-the-dashboard',
      comment: 'the dashboard is served as built files: no code imports it',
      severity: 'error',
      from: { pathNot: '^dashboard/' },
      to: { path: '^dashboard/' },
    },
    {
      name: 'thread-entry-by-url',
      comment: 'a *-worker.ts file runs on a pool thread: its pool loads it by URL, nothing imports its code',
      severity: 'error',
      from: {},
      to: { path: '-worker\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pools-in-pool-files',
      comment: 'thread pools live in *-pool.ts files, named so',
      severity: 'error',
      from: { pathNot: '-pool\\.ts$' },
      to: { path: 'node_modules/piscina/' },
    },
    {
      name: 'no-circular',
      comment: 'modules depend on each other in one direction',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|native/build)' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
