/**
 * Configuration, read once from flags and SABLE_* environment variables into one typed object
 * that the composition root passes down in slices. Nothing below this file reads process.env.
 */
import { configError } from '../errors/codes.js';
import { resolve } from 'node:path';
import type { EmbeddingSettings } from '../retrieval/embeddings/embedder.js';
import type { RerankSettings } from '../retrieval/rerank/providers.js';
import type { S3Settings } from '../storage/s3-store.js';

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
  /** Master key of organization secrets (SABLE_MASTER_KEY only: a flag would show in `ps`). */
  masterKey?: string;
}

function intOf(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw configError(`${name} must be an integer from ${min} to ${max} (got '${raw}')`);
  return n;
}

/** Flags win over environment variables, which win over defaults. */
export function loadConfig(flags: Record<string, string | undefined>, env: Record<string, string | undefined>): Config {
  const pick = (flag: string, envName: string) => flags[flag] ?? env[envName];
  const adapter = pick('http-adapter', 'SABLE_HTTP_ADAPTER') ?? 'auto';
  if (!['auto', 'uws', 'node'].includes(adapter)) throw configError(`http adapter must be auto, uws or node (got '${adapter}')`);
  return {
    host: pick('host', 'SABLE_HOST') ?? '127.0.0.1',
    port: intOf('port', pick('port', 'SABLE_PORT') ?? '8080', 0, 65535),
    dataDir: resolve(pick('data-dir', 'SABLE_DATA_DIR') ?? './.sable-data'),
    maxBodyBytes: intOf('max body bytes', pick('max-body-bytes', 'SABLE_MAX_BODY_BYTES') ?? String(64 * 1024 * 1024), 1024, 2 ** 31),
    searchThreads: intOf('search threads', pick('search-threads', 'SABLE_SEARCH_THREADS') ?? '2', 1, 256),
    httpAdapter: adapter as Config['httpAdapter'],
    logRequests: (pick('log-requests', 'SABLE_LOG_REQUESTS') ?? 'false') === 'true',
    rerank: {
      provider: pick('rerank-provider', 'SABLE_RERANK_PROVIDER') ?? 'local',
      url: pick('rerank-url', 'SABLE_RERANK_URL'),
      model: pick('rerank-model', 'SABLE_RERANK_MODEL'),
      timeoutMs: intOf('rerank timeout', pick('rerank-timeout-ms', 'SABLE_RERANK_TIMEOUT_MS') ?? '2000', 1, 600_000),
    },
    embeddings: {
      openaiUrl: pick('openai-url', 'SABLE_OPENAI_URL') ?? 'https://api.openai.com/v1',
      cohereUrl: pick('cohere-url', 'SABLE_COHERE_URL') ?? 'https://api.cohere.com',
      compatibleUrl: pick('embeddings-compatible-url', 'SABLE_EMBEDDINGS_COMPATIBLE_URL'),
      managedUrl: pick('managed-embeddings-url', 'SABLE_MANAGED_EMBEDDINGS_URL'),
      timeoutMs: intOf('embeddings timeout', pick('embeddings-timeout-ms', 'SABLE_EMBEDDINGS_TIMEOUT_MS') ?? '30000', 1, 600_000),
      retries: intOf('embeddings retries', pick('embeddings-retries', 'SABLE_EMBEDDINGS_RETRIES') ?? '3', 0, 10),
      backoffMs: intOf('embeddings backoff', pick('embeddings-backoff-ms', 'SABLE_EMBEDDINGS_BACKOFF_MS') ?? '500', 0, 60_000),
      cacheEntries: intOf('embeddings cache', pick('embeddings-cache', 'SABLE_EMBEDDINGS_CACHE') ?? '1000', 0, 1_000_000),
      localThreads: intOf('embedding threads', pick('embedding-threads', 'SABLE_EMBEDDING_THREADS') ?? '2', 1, 256),
    },
    provisionDelayMs: intOf('provision delay', pick('provision-delay-ms', 'SABLE_PROVISION_DELAY_MS') ?? '0', 0, 60_000),
    masterKey: env.SABLE_MASTER_KEY,
    uploadPort: pick('upload-port', 'SABLE_UPLOAD_PORT') === undefined ? undefined : intOf('upload port', pick('upload-port', 'SABLE_UPLOAD_PORT')!, 0, 65535),
    publicUploadUrl: pick('public-upload-url', 'SABLE_PUBLIC_UPLOAD_URL')?.replace(/\/+$/, ''),
    s3: s3Settings(pick('s3-endpoint', 'SABLE_S3_ENDPOINT'), pick('s3-bucket', 'SABLE_S3_BUCKET'), pick('s3-region', 'SABLE_S3_REGION'), pick('s3-prefix', 'SABLE_S3_PREFIX'), env),
  };
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

/** `--name value` and `--name=value` pairs; bare words are positionals. */
export function parseArgs(argv: string[]): { positionals: string[]; flags: Record<string, string> } {
  const positionals: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags[a.slice(2)] = argv[++i];
    else flags[a.slice(2)] = 'true';
  }
  return { positionals, flags };
}
