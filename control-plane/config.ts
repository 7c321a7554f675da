/**
 * Configuration, read once from flags and SABLE_* environment variables into one typed object
 * that the composition root passes down in slices. Nothing below this file reads process.env.
 *
 * Every setting is one row of SETTINGS: its flag, variable, default, what it takes and what it
 * does. The same rows parse the values, refuse unknown flags (naming the nearest one), and
 * print `sable serve --help`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configError } from '../errors/codes.js';
import { DEFAULT_ENDPOINTS, PROVIDERS, type Provider, type ProviderSettings } from '../ingest/connections/providers.js';
import type { EmbeddingSettings } from '../retrieval/embeddings/embedder.js';
import type { RerankSettings } from '../retrieval/rerank/providers.js';
import type { S3Settings } from '../objects/s3-store.js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Largest request body accepted, bytes. */
  maxBodyBytes: number;
  /** Search worker threads. */
  searchThreads: number;
  /** Force the node:http adapter even where uWebSockets.js loads. */
  httpAdapter: 'auto' | 'uws' | 'node';
  /** Log each request to stderr. */
  logRequests: boolean;
  /** Origins whose pages may call the API from a browser (CORS); `*` for any; none by default. */
  corsOrigins: string[];
  rerank: RerankSettings;
  embeddings: EmbeddingSettings;
  /** Delay before a new dataset's engine is provisioned (tests of the 503 readiness path). */
  provisionDelayMs: number;
  /** Port of the upload listener (uWebSockets.js takes no bodies of 1 GB and more); default the
   * service port + 1, or a free port when the service port is 0. */
  uploadPort?: number;
  /** How callers reach the upload listener, for the URLs the service signs (default: the host of
   * the request with the upload port). */
  publicUploadUrl?: string;
  s3?: S3Settings;
  ingest: IngestSettings;
  /** How often due schedules are looked for. */
  scheduleTickMs: number;
  answers: AnswerConfig;
  /** OAuth clients of connections, by provider (absent: not configured). */
  oauth: Partial<Record<Provider, ProviderSettings>>;
  /** How browsers reach the service (the OAuth callback); default: the address it listens on. */
  publicUrl?: string;
  /** Master key of organization secrets (SABLE_MASTER_KEY only: a flag would show in `ps`). */
  masterKey?: string;
  /** Cluster mode (SABLE_DATABASE_URL set); absent: the embedded service. */
  cluster?: ClusterConfig;
}

export type ClusterRole = 'api' | 'search' | 'worker';

export interface ClusterConfig {
  /** PostgreSQL, the cluster's system of record (SABLE_DATABASE_URL only: it may hold a password). */
  databaseUrl: string;
  nodeId: string;
  roles: ClusterRole[];
  /** How the other nodes reach this one's internal routes. */
  advertiseUrl: string;
  /** Shared by the nodes; internal routes refuse a request without it (SABLE_CLUSTER_SECRET only). */
  secret: string;
  /** Shards and replicas of a new dataset. */
  shards: number;
  replicas: number;
  /** How long a write waits for its replicas to apply it. */
  ackTimeoutMs: number;
  /** The node's lease on the database's clock, and how often it is renewed. */
  leaseMs: number;
  heartbeatMs: number;
  /** How long the controller waits past a node's lease before it moves its replicas. */
  graceMs: number;
  /** Bound of one database statement (server and client side): how long a node cut from PostgreSQL takes to fail a call. */
  databaseTimeoutMs: number;
  /** A shard is snapshot to object storage every this many log entries, or this often when it has any. */
  snapshotEntries: number;
  snapshotIntervalMs: number;
}

export interface IngestSettings {
  parseThreads: number;
  /** Files of one job in flight at once. */
  concurrency: number;
  /** Wall time of one file (fetch, parse, embed, index). */
  fileTimeoutMs: number;
  /** Wall time of parsing one file. */
  parseTimeoutMs: number;
  /** Largest uploaded file that is parsed (file_upload sources; other types have it in their config). */
  maxFileBytes: number;
  /** Sources may reach private, loopback and link-local addresses. */
  allowPrivateNetwork: boolean;
  /** Least time between two requests of a web crawl to one host. */
  webPolitenessMs: number;
  /** Google's token endpoint (service-account keys and refresh tokens of gcs and gdrive sources are exchanged there). */
  googleTokenUrl: string;
  gcsApiUrl: string;
  driveApiUrl: string;
  /** api.atlassian.com, or a stand-in (jira and confluence sources with a cloud_id). */
  atlassianApiUrl: string;
  /** The GitHub App that github sources read through (null: none configured). */
  githubApp: { apiUrl: string; appId: string; privateKey: string } | null;
}

export interface AnswerConfig {
  /** Tokens a run may gather and generate. */
  maxTokens: number;
  defaultMaxSteps: number;
  defaultDeadlineSeconds: number;
  /** How long a run whose stream dropped keeps working for a caller to re-attach. */
  detachGraceMs: number;
  maxRunningPerOrg: number;
  /** Length bounds of an extractive answer. */
  extractive: { maxSentences: number; maxWords: number };
  llm: { url: string; model: string; timeoutMs: number; keySecret: string; apiKey?: string } | null;
}

export interface Setting {
  flag: string;
  env: string;
  default?: string;
  /** What the value is, for help: N, URL, DIR, a list of choices... */
  takes: string;
  help: string;
  /** Integer bounds, or allowed values; checked when the value is read. */
  int?: [number, number];
  oneOf?: string[];
}

const MB = 1024 * 1024;

export const SETTINGS: Setting[] = [
  { flag: 'host', env: 'SABLE_HOST', default: '127.0.0.1', takes: 'ADDR', help: 'address to listen on' },
  { flag: 'port', env: 'SABLE_PORT', default: '8080', takes: 'N', int: [0, 65535], help: 'port to listen on; 0 picks a free one (printed at start)' },
  { flag: 'data-dir', env: 'SABLE_DATA_DIR', default: './.sable-data', takes: 'DIR', help: 'where datasets, keys, jobs and uploads are kept' },
  { flag: 'max-body-bytes', env: 'SABLE_MAX_BODY_BYTES', default: String(64 * MB), takes: 'N', int: [1024, 2 ** 31], help: 'largest request body (64 MiB; uploads stream past it)' },
  { flag: 'search-threads', env: 'SABLE_SEARCH_THREADS', default: '2', takes: 'N', int: [1, 256], help: 'worker threads for searches of many partitions' },
  { flag: 'http-adapter', env: 'SABLE_HTTP_ADAPTER', default: 'auto', takes: 'auto|uws|node', oneOf: ['auto', 'uws', 'node'], help: 'uWebSockets.js where it loads, else node:http' },
  { flag: 'log-requests', env: 'SABLE_LOG_REQUESTS', default: 'false', takes: 'true|false', oneOf: ['true', 'false'], help: 'log each request to stderr' },
  { flag: 'cors-origins', env: 'SABLE_CORS_ORIGINS', takes: 'ORIGINS', help: 'origins whose pages may call the API from a browser (https://app.example.com, comma-separated; * for any); none by default' },
  { flag: 'upload-port', env: 'SABLE_UPLOAD_PORT', takes: 'N', int: [0, 65535], help: 'port of the upload listener (default: the port + 1; a free one with port 0)' },
  { flag: 'public-upload-url', env: 'SABLE_PUBLIC_UPLOAD_URL', takes: 'URL', help: 'how callers reach the upload listener, for the URLs the service signs' },
  { flag: 'embedding-threads', env: 'SABLE_EMBEDDING_THREADS', default: '2', takes: 'N', int: [1, 256], help: 'threads of the local embedding model' },
  { flag: 'embeddings-cache', env: 'SABLE_EMBEDDINGS_CACHE', default: '1000', takes: 'N', int: [0, 1_000_000], help: 'query embeddings kept in memory (0: none)' },
  { flag: 'embeddings-timeout-ms', env: 'SABLE_EMBEDDINGS_TIMEOUT_MS', default: '30000', takes: 'N', int: [1, 600_000], help: 'time bound of one call to an embedding provider' },
  { flag: 'embeddings-retries', env: 'SABLE_EMBEDDINGS_RETRIES', default: '3', takes: 'N', int: [0, 10], help: 'retries of a provider call on 429, 5xx and network failures' },
  { flag: 'embeddings-backoff-ms', env: 'SABLE_EMBEDDINGS_BACKOFF_MS', default: '500', takes: 'N', int: [0, 60_000], help: 'first backoff between retries (doubles)' },
  { flag: 'openai-url', env: 'SABLE_OPENAI_URL', default: 'https://api.openai.com/v1', takes: 'URL', help: 'OpenAI API base URL' },
  { flag: 'cohere-url', env: 'SABLE_COHERE_URL', default: 'https://api.cohere.com', takes: 'URL', help: 'Cohere API base URL' },
  { flag: 'embeddings-compatible-url', env: 'SABLE_EMBEDDINGS_COMPATIBLE_URL', takes: 'URL', help: 'an OpenAI-compatible server (Ollama, vLLM, TEI) for provider openai-compatible' },
  { flag: 'managed-embeddings-url', env: 'SABLE_MANAGED_EMBEDDINGS_URL', takes: 'URL', help: "the inference server of the contract's managed models; when set, datasets default to it" },
  { flag: 'rerank-provider', env: 'SABLE_RERANK_PROVIDER', default: 'local', takes: 'NAME', help: 'default reranker: local (lexical), cohere, jina, or a name with --rerank-url' },
  { flag: 'rerank-url', env: 'SABLE_RERANK_URL', takes: 'URL', help: 'base URL of the rerank provider (Cohere / Jina format)' },
  { flag: 'rerank-model', env: 'SABLE_RERANK_MODEL', takes: 'NAME', help: "the rerank provider's default model" },
  { flag: 'rerank-timeout-ms', env: 'SABLE_RERANK_TIMEOUT_MS', default: '2000', takes: 'N', int: [1, 600_000], help: 'time bound of a rerank call (the search fails open past it)' },
  { flag: 's3-endpoint', env: 'SABLE_S3_ENDPOINT', takes: 'URL', help: 'S3-compatible storage for uploaded files (default: a folder in the data directory)' },
  { flag: 's3-bucket', env: 'SABLE_S3_BUCKET', takes: 'NAME', help: 'bucket, with --s3-endpoint' },
  { flag: 's3-region', env: 'SABLE_S3_REGION', default: 'us-east-1', takes: 'NAME', help: 'region, with --s3-endpoint' },
  { flag: 's3-prefix', env: 'SABLE_S3_PREFIX', takes: 'PREFIX', help: 'key prefix inside the bucket' },
  { flag: 'parse-threads', env: 'SABLE_PARSE_THREADS', default: '1', takes: 'N', int: [1, 256], help: 'worker threads that parse and chunk ingested files' },
  { flag: 'ingest-concurrency', env: 'SABLE_INGEST_CONCURRENCY', default: '2', takes: 'N', int: [1, 64], help: 'files of one ingestion job in flight at once' },
  { flag: 'ingest-file-timeout-ms', env: 'SABLE_INGEST_FILE_TIMEOUT_MS', default: '900000', takes: 'N', int: [1000, 86_400_000], help: 'time bound of one ingested file: fetch, parse, embed, index (it fails as timed_out)' },
  { flag: 'parse-timeout-ms', env: 'SABLE_PARSE_TIMEOUT_MS', default: '120000', takes: 'N', int: [100, 3_600_000], help: 'time bound of parsing one file (its thread is ended past it)' },
  { flag: 'ingest-max-file-bytes', env: 'SABLE_INGEST_MAX_FILE_BYTES', default: String(100 * MB), takes: 'N', int: [1, 2 ** 40], help: 'largest uploaded document that is parsed (100 MiB); larger ones fail file_too_large' },
  { flag: 'allow-private-network', env: 'SABLE_ALLOW_PRIVATE_NETWORK', default: 'false', takes: 'true|false', oneOf: ['true', 'false'], help: 'let sources reach private, loopback and link-local addresses (a bucket or site on this machine or LAN)' },
  { flag: 'web-politeness-ms', env: 'SABLE_WEB_POLITENESS_MS', default: '250', takes: 'N', int: [0, 60_000], help: "least time between two requests of a web crawl to one host (robots.txt's Crawl-delay may ask for more)" },
  { flag: 'gcs-api-url', env: 'SABLE_GCS_API_URL', default: 'https://storage.googleapis.com', takes: 'URL', help: 'Google Cloud Storage JSON API base (gcs sources)' },
  { flag: 'gdrive-api-url', env: 'SABLE_GDRIVE_API_URL', default: 'https://www.googleapis.com/', takes: 'URL', help: 'Google Drive API root (gdrive sources)' },
  { flag: 'atlassian-api-url', env: 'SABLE_ATLASSIAN_API_URL', default: 'https://api.atlassian.com', takes: 'URL', help: 'Atlassian cloud API gateway (jira and confluence sources by cloud_id)' },
  { flag: 'github-api-url', env: 'SABLE_GITHUB_API_URL', default: 'https://api.github.com', takes: 'URL', help: 'GitHub REST API base (GitHub Enterprise: https://HOST/api/v3)' },
  { flag: 'github-app-id', env: 'SABLE_GITHUB_APP_ID', takes: 'ID', help: 'the GitHub App github sources read through (its key: SABLE_GITHUB_APP_PRIVATE_KEY or --github-app-key-file)' },
  { flag: 'github-app-key-file', env: 'SABLE_GITHUB_APP_KEY_FILE', takes: 'FILE', help: "the GitHub App's private key (PEM)" },
  { flag: 'public-url', env: 'SABLE_PUBLIC_URL', takes: 'URL', help: 'how browsers reach this service (OAuth callbacks: {url}/connections/callback); default: the address it listens on' },
  ...PROVIDERS.flatMap((p): Setting[] => [
    { flag: `${p}-client-id`, env: `SABLE_${p.toUpperCase()}_CLIENT_ID`, takes: 'ID', help: `OAuth client of ${p} connections (its secret: SABLE_${p.toUpperCase()}_CLIENT_SECRET)` },
    { flag: `${p}-authorize-url`, env: `SABLE_${p.toUpperCase()}_AUTHORIZE_URL`, default: DEFAULT_ENDPOINTS[p].authorizeUrl, takes: 'URL', help: `${p} OAuth authorization endpoint` },
    { flag: `${p}-token-url`, env: `SABLE_${p.toUpperCase()}_TOKEN_URL`, default: DEFAULT_ENDPOINTS[p].tokenUrl, takes: 'URL', help: `${p} OAuth token endpoint` },
    { flag: `${p}-userinfo-url`, env: `SABLE_${p.toUpperCase()}_USERINFO_URL`, default: DEFAULT_ENDPOINTS[p].userinfoUrl, takes: 'URL', help: `${p} endpoint that names the connected account` },
    { flag: `${p}-revoke-url`, env: `SABLE_${p.toUpperCase()}_REVOKE_URL`, ...(DEFAULT_ENDPOINTS[p].revokeUrl ? { default: DEFAULT_ENDPOINTS[p].revokeUrl } : {}), takes: 'URL', help: `${p} token revocation endpoint (none: a deleted grant is only forgotten)` },
  ]),
  { flag: 'schedule-tick-ms', env: 'SABLE_SCHEDULE_TICK_MS', default: '1000', takes: 'N', int: [10, 60_000], help: 'how often due schedules are looked for' },
  { flag: 'llm-url', env: 'SABLE_LLM_URL', takes: 'URL', help: 'an OpenAI-compatible chat endpoint (e.g. https://api.openai.com/v1): answers are generated, agentic mode uses its tools; default: extractive answers, no model' },
  { flag: 'llm-model', env: 'SABLE_LLM_MODEL', default: 'gpt-4o-mini', takes: 'NAME', help: 'the chat model, with --llm-url' },
  { flag: 'llm-key-secret', env: 'SABLE_LLM_KEY_SECRET', default: 'llm_api_key', takes: 'NAME', help: "organization secret holding the chat endpoint's key (else SABLE_LLM_API_KEY)" },
  { flag: 'llm-timeout-ms', env: 'SABLE_LLM_TIMEOUT_MS', default: '30000', takes: 'N', int: [100, 600_000], help: 'time bound of one call to the chat endpoint (the answer falls back to extractive past it)' },
  { flag: 'answer-max-tokens', env: 'SABLE_ANSWER_MAX_TOKENS', default: '8000', takes: 'N', int: [10, 1_000_000], help: 'tokens one question may gather and generate' },
  { flag: 'answer-max-steps', env: 'SABLE_ANSWER_MAX_STEPS', default: '6', takes: 'N', int: [1, 24], help: 'tool steps of a question that sets no max_steps' },
  { flag: 'answer-deadline-seconds', env: 'SABLE_ANSWER_DEADLINE_SECONDS', default: '60', takes: 'N', int: [5, 600], help: 'wall clock of a question that sets no deadline_seconds' },
  { flag: 'answer-detach-grace-ms', env: 'SABLE_ANSWER_DETACH_GRACE_MS', default: '10000', takes: 'N', int: [0, 600_000], help: 'how long a run whose stream dropped keeps working for the caller to re-attach (then it is cancelled)' },
  { flag: 'answer-max-sentences', env: 'SABLE_ANSWER_MAX_SENTENCES', default: '3', takes: 'N', int: [1, 50], help: 'sentences of an extractive answer (no model)' },
  { flag: 'answer-max-words', env: 'SABLE_ANSWER_MAX_WORDS', default: '80', takes: 'N', int: [10, 2000], help: 'words of an extractive answer (its first sentence is kept whole)' },
  { flag: 'answer-max-runs', env: 'SABLE_ANSWER_MAX_RUNS', default: '32', takes: 'N', int: [1, 10_000], help: 'questions of one organization answered at once (more: 429)' },
  { flag: 'node-id', env: 'SABLE_NODE_ID', takes: 'NAME', help: 'cluster mode: this node\'s name, stable across restarts (default: the advertised host:port)' },
  { flag: 'roles', env: 'SABLE_ROLES', default: 'api,search,worker', takes: 'LIST', help: 'cluster mode: what this node does: api (REST and router), search (hosts shard replicas), worker (jobs, schedules), comma-separated' },
  { flag: 'advertise-url', env: 'SABLE_ADVERTISE_URL', takes: 'URL', help: 'cluster mode: how the other nodes reach this one (default: http://host:port)' },
  { flag: 'shards', env: 'SABLE_SHARDS', default: '2', takes: 'N', int: [1, 256], help: 'cluster mode: shards of a new dataset (fixed at creation)' },
  { flag: 'replicas', env: 'SABLE_REPLICAS', default: '2', takes: 'N', int: [1, 16], help: 'cluster mode: replicas of each shard of a new dataset' },
  { flag: 'ack-timeout-ms', env: 'SABLE_ACK_TIMEOUT_MS', default: '2000', takes: 'N', int: [50, 600_000], help: 'cluster mode: how long a write waits for its replicas to apply it' },
  { flag: 'node-lease-ms', env: 'SABLE_NODE_LEASE_MS', default: '10000', takes: 'N', int: [300, 600_000], help: 'cluster mode: a node\'s lease on the database\'s clock (renewed every fifth of it); past it the node stops serving' },
  { flag: 'replica-grace-ms', env: 'SABLE_REPLICA_GRACE_MS', default: '20000', takes: 'N', int: [0, 3_600_000], help: 'cluster mode: how long past a lost lease before a node\'s replicas are placed elsewhere' },
  { flag: 'database-timeout-ms', env: 'SABLE_DATABASE_TIMEOUT_MS', default: '30000', takes: 'N', int: [500, 600_000], help: 'cluster mode: bound of one PostgreSQL statement; a node cut from the database fails its calls (503) after it' },
  { flag: 'snapshot-entries', env: 'SABLE_SNAPSHOT_ENTRIES', default: '100000', takes: 'N', int: [1, 1_000_000_000], help: 'cluster mode: a shard replica is snapshot to object storage every this many log entries (the log is cut behind the second-newest snapshot)' },
  { flag: 'snapshot-interval-ms', env: 'SABLE_SNAPSHOT_INTERVAL_MS', default: '600000', takes: 'N', int: [1000, 86_400_000], help: 'cluster mode: ... or this often, when its log has any entry past the newest snapshot' },
  { flag: 'provision-delay-ms', env: 'SABLE_PROVISION_DELAY_MS', default: '0', takes: 'N', int: [0, 60_000], help: "wait before a new dataset's engine is provisioned (tests)" },
];

/** Settings read from the environment only: a flag would show in `ps`. */
export const SECRET_ENV = [
  ['SABLE_MASTER_KEY', 'key of organization secrets (64 hex characters or base64 of 32 bytes); default: master.key in the data directory (cluster mode: required, the same on every node)'],
  ['SABLE_DATABASE_URL', 'PostgreSQL connection URL: when set, the node joins a cluster (postgres://user:password@host:port/db)'],
  ['SABLE_CLUSTER_SECRET', 'cluster mode: the secret the nodes present to each other (16 characters or more, the same on every node)'],
  ['SABLE_S3_ACCESS_KEY_ID', 'S3 access key (or AWS_ACCESS_KEY_ID)'],
  ['SABLE_S3_SECRET_ACCESS_KEY', 'S3 secret key (or AWS_SECRET_ACCESS_KEY)'],
  ['SABLE_GITHUB_APP_PRIVATE_KEY', "the GitHub App's private key (PEM text; or --github-app-key-file)"],
  ['SABLE_GOOGLE_CLIENT_SECRET', 'OAuth client secret of google connections'],
  ['SABLE_ATLASSIAN_CLIENT_SECRET', 'OAuth client secret of atlassian connections'],
  ['SABLE_LLM_API_KEY', 'key of the chat endpoint (an organization secret named by --llm-key-secret wins)'],
] as const;

const byFlag = new Map(SETTINGS.map((s) => [s.flag, s]));

/** Flags win over environment variables, which win over defaults. Unknown flags are refused. */
export function loadConfig(flags: Record<string, string | undefined>, env: Record<string, string | undefined>): Config {
  checkFlags(flags, SETTINGS.map((s) => s.flag));
  const raw = (flag: string): string | undefined => {
    const s = byFlag.get(flag)!;
    return flags[flag] ?? env[s.env] ?? s.default;
  };
  const str = (flag: string): string | undefined => {
    const v = raw(flag);
    const s = byFlag.get(flag)!;
    if (v !== undefined && s.oneOf && !s.oneOf.includes(v)) throw configError(`${source(flag, flags)} must be ${s.oneOf.join(', ')} (got '${v}')`);
    return v;
  };
  const int = (flag: string): number => optInt(flag)!;
  const optInt = (flag: string): number | undefined => {
    const v = raw(flag);
    if (v === undefined) return undefined;
    const [min, max] = byFlag.get(flag)!.int!;
    const n = Number(v);
    if (v.trim() === '' || !Number.isInteger(n) || n < min || n > max) throw configError(`${source(flag, flags)} must be an integer from ${min} to ${max} (got '${v}')`);
    return n;
  };
  return {
    host: str('host')!,
    port: int('port'),
    dataDir: resolve(str('data-dir')!),
    maxBodyBytes: int('max-body-bytes'),
    searchThreads: int('search-threads'),
    httpAdapter: str('http-adapter') as Config['httpAdapter'],
    logRequests: str('log-requests') === 'true',
    corsOrigins: corsOrigins(str('cors-origins'), source('cors-origins', flags)),
    rerank: { provider: str('rerank-provider')!, url: str('rerank-url'), model: str('rerank-model'), timeoutMs: int('rerank-timeout-ms') },
    embeddings: {
      openaiUrl: str('openai-url')!,
      cohereUrl: str('cohere-url')!,
      compatibleUrl: str('embeddings-compatible-url'),
      managedUrl: str('managed-embeddings-url'),
      timeoutMs: int('embeddings-timeout-ms'),
      retries: int('embeddings-retries'),
      backoffMs: int('embeddings-backoff-ms'),
      cacheEntries: int('embeddings-cache'),
      localThreads: int('embedding-threads'),
    },
    provisionDelayMs: int('provision-delay-ms'),
    masterKey: env.SABLE_MASTER_KEY,
    uploadPort: optInt('upload-port'),
    publicUploadUrl: str('public-upload-url')?.replace(/\/+$/, ''),
    s3: s3Settings(str('s3-endpoint'), str('s3-bucket'), str('s3-region'), str('s3-prefix'), env),
    ingest: { parseThreads: int('parse-threads'), concurrency: int('ingest-concurrency'), fileTimeoutMs: int('ingest-file-timeout-ms'), parseTimeoutMs: int('parse-timeout-ms'), maxFileBytes: int('ingest-max-file-bytes'), allowPrivateNetwork: str('allow-private-network') === 'true', webPolitenessMs: int('web-politeness-ms'), atlassianApiUrl: str('atlassian-api-url')!.replace(/\/+$/, ''), googleTokenUrl: str('google-token-url')!, gcsApiUrl: str('gcs-api-url')!.replace(/\/+$/, ''), driveApiUrl: str('gdrive-api-url')!.replace(/\/*$/, '/'), githubApp: githubApp(str('github-api-url')!, str('github-app-id'), str('github-app-key-file'), env.SABLE_GITHUB_APP_PRIVATE_KEY) },
    scheduleTickMs: int('schedule-tick-ms'),
    publicUrl: str('public-url')?.replace(/\/+$/, ''),
    oauth: Object.fromEntries(
      PROVIDERS.flatMap((p) => {
        const clientId = str(`${p}-client-id`);
        if (!clientId) return [];
        const clientSecret = env[`SABLE_${p.toUpperCase()}_CLIENT_SECRET`];
        if (!clientSecret) throw configError(`SABLE_${p.toUpperCase()}_CLIENT_ID is set without SABLE_${p.toUpperCase()}_CLIENT_SECRET`);
        return [[p, { clientId, clientSecret, authorizeUrl: str(`${p}-authorize-url`)!, tokenUrl: str(`${p}-token-url`)!, userinfoUrl: str(`${p}-userinfo-url`)!, revokeUrl: str(`${p}-revoke-url`) ?? null }]];
      }),
    ),
    cluster: clusterSettings(env, str, int, str('host')!, int('port'), Boolean(env.SABLE_S3_ENDPOINT ?? flags['s3-endpoint'])),
    answers: {
      maxTokens: int('answer-max-tokens'),
      defaultMaxSteps: int('answer-max-steps'),
      defaultDeadlineSeconds: int('answer-deadline-seconds'),
      detachGraceMs: int('answer-detach-grace-ms'),
      maxRunningPerOrg: int('answer-max-runs'),
      extractive: { maxSentences: int('answer-max-sentences'), maxWords: int('answer-max-words') },
      llm: llmSettings(str('llm-url'), str('llm-model')!, int('llm-timeout-ms'), str('llm-key-secret')!, env.SABLE_LLM_API_KEY),
    },
  };
}

const ROLES: readonly ClusterRole[] = ['api', 'search', 'worker'];

/** Cluster mode when SABLE_DATABASE_URL is set: what it needs besides, checked before anything opens. */
function clusterSettings(
  env: Record<string, string | undefined>,
  str: (flag: string) => string | undefined,
  int: (flag: string) => number,
  host: string,
  port: number,
  objectStore: boolean,
): ClusterConfig | undefined {
  const databaseUrl = env.SABLE_DATABASE_URL;
  if (!databaseUrl) return undefined;
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw configError('SABLE_DATABASE_URL must be a postgres:// URL');
  const secret = env.SABLE_CLUSTER_SECRET;
  if (!secret || secret.length < 16) throw configError('cluster mode (SABLE_DATABASE_URL) needs SABLE_CLUSTER_SECRET: 16 characters or more, the same on every node');
  if (!env.SABLE_MASTER_KEY) throw configError('cluster mode (SABLE_DATABASE_URL) needs SABLE_MASTER_KEY, the same on every node: secrets sealed on one node are opened on another');
  if (!objectStore) throw configError('cluster mode (SABLE_DATABASE_URL) needs object storage every node reaches: --s3-endpoint / SABLE_S3_ENDPOINT (uploaded originals)');
  const roles = (str('roles') ?? '').split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = roles.filter((r) => !ROLES.includes(r as ClusterRole));
  if (roles.length === 0 || unknown.length > 0) throw configError(`--roles / SABLE_ROLES takes api, search and worker, comma-separated (got '${str('roles')}')`);
  if (port === 0 && !str('advertise-url')) throw configError('cluster mode needs a fixed --port (or --advertise-url): the other nodes call this one there');
  if ((host === '0.0.0.0' || host === '::') && !str('advertise-url')) throw configError(`cluster mode on ${host} needs --advertise-url / SABLE_ADVERTISE_URL: the address the other nodes call`);
  const advertiseUrl = (str('advertise-url') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(advertiseUrl)) throw configError(`--advertise-url must be an http(s) URL (got '${advertiseUrl}')`);
  const leaseMs = int('node-lease-ms');
  return {
    databaseUrl,
    nodeId: str('node-id') ?? new URL(advertiseUrl).host,
    roles: [...new Set(roles as ClusterRole[])],
    advertiseUrl,
    secret,
    shards: int('shards'),
    replicas: int('replicas'),
    ackTimeoutMs: int('ack-timeout-ms'),
    leaseMs,
    heartbeatMs: Math.max(50, Math.floor(leaseMs / 5)),
    graceMs: int('replica-grace-ms'),
    databaseTimeoutMs: int('database-timeout-ms'),
    snapshotEntries: int('snapshot-entries'),
    snapshotIntervalMs: int('snapshot-interval-ms'),
  };
}

/** Names a value by where it came from: the flag when given, else its variable. */
function source(flag: string, flags: Record<string, string | undefined>): string {
  return flags[flag] !== undefined ? `--${flag}` : byFlag.get(flag)!.env;
}

function githubApp(apiUrl: string, appId: string | undefined, keyFile: string | undefined, keyText: string | undefined): IngestSettings['githubApp'] {
  if (!appId) {
    if (keyFile || keyText) throw configError('a GitHub App key is set without SABLE_GITHUB_APP_ID');
    return null;
  }
  let privateKey = keyText;
  if (keyFile) {
    try {
      privateKey = readFileSync(keyFile, 'utf8');
    } catch (e) {
      throw configError(`the GitHub App key file ${keyFile} cannot be read: ${(e as Error).message}`);
    }
  }
  if (!privateKey || !privateKey.includes('PRIVATE KEY')) throw configError('SABLE_GITHUB_APP_ID needs the App key in PEM form: SABLE_GITHUB_APP_PRIVATE_KEY or --github-app-key-file');
  return { apiUrl: apiUrl.replace(/\/+$/, ''), appId, privateKey };
}

function llmSettings(url: string | undefined, model: string, timeoutMs: number, keySecret: string, apiKey: string | undefined): AnswerConfig['llm'] {
  if (!url) return null;
  if (!/^https?:\/\//.test(url)) throw configError(`SABLE_LLM_URL must be an http(s) URL (got '${url}')`);
  return { url: url.replace(/\/+$/, ''), model, timeoutMs, keySecret, ...(apiKey ? { apiKey } : {}) };
}

/** Object storage is on when an endpoint is set; its keys come from the environment only. */
function s3Settings(endpoint: string | undefined, bucket: string | undefined, region: string | undefined, prefix: string | undefined, env: Record<string, string | undefined>): S3Settings | undefined {
  if (!endpoint) return undefined;
  if (!/^https?:\/\//.test(endpoint)) throw configError(`the S3 endpoint must be an http(s) URL (got '${endpoint}')`);
  const accessKeyId = env.SABLE_S3_ACCESS_KEY_ID ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.SABLE_S3_SECRET_ACCESS_KEY ?? env.AWS_SECRET_ACCESS_KEY;
  if (!bucket) throw configError('SABLE_S3_BUCKET is required with SABLE_S3_ENDPOINT');
  if (!accessKeyId || !secretAccessKey) throw configError('SABLE_S3_ACCESS_KEY_ID and SABLE_S3_SECRET_ACCESS_KEY are required with SABLE_S3_ENDPOINT');
  return { endpoint: endpoint.replace(/\/+$/, ''), bucket, region: region ?? 'us-east-1', accessKeyId, secretAccessKey, prefix: (prefix ?? '').replace(/^\/+|\/+$/g, '') };
}

/** Refuses a flag the command does not take, naming the nearest one it does. */
export function checkFlags(flags: Record<string, string | undefined>, known: string[]): void {
  for (const flag of Object.keys(flags)) {
    if (known.includes(flag)) continue;
    const near = nearest(flag, known);
    throw configError(`unknown flag --${flag}${near ? ` (did you mean --${near}?)` : ''}`);
  }
}

/** The closest of `options` to `word` by edit distance, when it is close enough to be a typo. */
export function nearest(word: string, options: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const o of options) {
    const d = o.startsWith(word) && word.length >= 3 ? 1 : editDistance(word, o);
    if (d < bestDistance) [best, bestDistance] = [o, d];
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/** `--name value`, `--name=value` and bare `--name` (true); bare words are positionals; `-h` is `--help`. */
export function parseArgs(argv: string[]): { positionals: string[]; flags: Record<string, string> } {
  const positionals: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] === '-h' ? '--help' : argv[i];
    if (!a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else if (a !== '--help' && a !== '--version' && i + 1 < argv.length && !argv[i + 1].startsWith('-')) flags[a.slice(2)] = argv[++i];
    else flags[a.slice(2)] = 'true';
  }
  return { positionals, flags };
}

/** SABLE_CORS_ORIGINS as origins (scheme://host[:port], as browsers send them in Origin), or `*`. */
function corsOrigins(raw: string | undefined, name: string): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((item) => {
    const o = item.trim();
    if (o === '*') return o;
    let url: URL | undefined;
    try {
      url = new URL(o);
    } catch {
      // reported below
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== o.replace(/\/$/, '')) {
      throw configError(`${name}: '${o}' is not an origin (scheme://host[:port], no path, e.g. https://app.example.com), nor *`);
    }
    return url.origin;
  });
}
