/**
 * The layer rules of the tree, checked by `npm test` (npm run check:layers). Layers import
 * downward only:
 *
 *   control-plane -> {answer, ingest} -> {retrieval, jobs} -> {catalog, storage, outbound} -> workers -> engine -> native
 *
 * with errors/ below everything, and client/ (the HTTP client) beside them, importing them as types
 * only. Nothing else imports control-plane; engine internals are reached
 * through engine/index.ts only; the native addon is loaded by engine/native.ts only (a test
 * checks that, as the addon is not an import).
 */
const LAYERS = {
  errors: [],
  engine: ['errors'],
  workers: ['errors', 'engine'],
  outbound: ['errors'],
  storage: ['errors', 'outbound'],
  catalog: ['errors', 'engine'],
  retrieval: ['errors', 'engine', 'workers', 'outbound', 'catalog'],
  jobs: ['errors', 'engine', 'workers', 'outbound', 'storage', 'catalog'],
  ingest: ['errors', 'engine', 'workers', 'outbound', 'storage', 'catalog', 'retrieval', 'jobs'],
  answer: ['errors', 'engine', 'workers', 'outbound', 'storage', 'catalog', 'retrieval'],
  'control-plane': ['errors', 'engine', 'workers', 'outbound', 'storage', 'catalog', 'retrieval', 'jobs', 'ingest', 'answer'],
  // The HTTP client shares the service's types, never its code (rule client-types-only below).
  client: ['errors', 'engine', 'workers', 'outbound', 'storage', 'catalog', 'retrieval', 'jobs', 'ingest', 'answer', 'control-plane'],
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
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
