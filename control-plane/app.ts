/**
 * The composition root of the service: config -> stores -> engine -> pools -> routes -> HTTP.
 * Used by `sable serve` and by the tests (port 0).
 */
import { accessSync, chmodSync, constants, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PreviewSigner } from '../answer/preview-ref.js';
import { LocalRunLog } from '../answer/runs/local-run-log.js';
import { RunStore } from '../answer/runs/run-store.js';
import { StreamTokens } from '../answer/runs/stream-tokens.js';
import { AnswerService } from '../answer/service.js';
import { SessionService } from '../answer/sessions/service.js';
import { SessionStore } from '../answer/sessions/store.js';
import type { DatasetRecord } from '../catalog/datasets/record.js';
import { DatasetService } from '../catalog/datasets/service.js';
import { loadMasterKey } from '../catalog/secrets/master-key.js';
import { SecretStore } from '../catalog/secrets/store.js';
import { ControlStore } from '../catalog/store.js';
import { Engine, ShardPool } from '../engine/index.js';
import { ParquetPool } from '../bulk/parquet/parquet-pool.js';
import { ParsePool } from '../ingest/parse/parse-pool.js';
import { ParquetLoadHandler } from '../bulk/parquet-load.js';
import { ParquetLoader } from '../bulk/parquet-file-loader.js';
import { BulkUploads } from '../bulk/uploads.js';
import { LmdbJobQueue } from '../jobs/lmdb-queue.js';
import type { JobQueue } from '../jobs/queue.js';
import { JobRunner } from '../jobs/runner.js';
import { Scheduler } from '../jobs/scheduler.js';
import { UploadJobs } from '../jobs/uploads.js';
import { ConnectionService } from '../ingest/connections/service.js';
import { ConnectionStore } from '../ingest/connections/store.js';
import type { ConnectionTokens, Connectors } from '../ingest/connectors/connector.js';
import { FileUploadConnector } from '../ingest/connectors/file-upload.js';
import { ConfluenceConnector } from '../ingest/connectors/confluence.js';
import { GcsConnector } from '../ingest/connectors/gcs.js';
import { DriveConnector } from '../ingest/connectors/gdrive.js';
import { GitHubConnector } from '../ingest/connectors/github.js';
import { GoogleTokens } from '../ingest/connectors/google-auth.js';
import { GitLabConnector } from '../ingest/connectors/gitlab.js';
import { JiraConnector } from '../ingest/connectors/jira.js';
import { redacting } from '../ingest/connectors/redacting.js';
import { S3Connector } from '../ingest/connectors/s3.js';
import { WebConnector } from '../ingest/connectors/web.js';
import { DocumentService } from '../ingest/documents/service.js';
import { DocumentStore } from '../catalog/documents/store.js';
import { IngestJobs } from '../ingest/jobs.js';
import { IngestJobHandler } from '../ingest/pipeline/ingest-job.js';
import { ScheduleService } from '../ingest/schedules/service.js';
import { ScheduleRecords } from '../ingest/schedules/store.js';
import { SourcePreviews } from '../ingest/sources/previews.js';
import { SourceService } from '../ingest/sources/service.js';
import { SourceStore } from '../ingest/sources/store.js';
import { Embedder } from '../retrieval/embeddings/embedder.js';
import { RerankProviders } from '../retrieval/rerank/providers.js';
import { engineRows, type DatasetRows } from '../retrieval/rows.js';
import { SearchService } from '../retrieval/search.js';
import { VectorWrites } from '../retrieval/vectors.js';
import { LocalObjectStore } from '../objects/local-store.js';
import type { ObjectStore } from '../objects/object-store.js';
import { S3ObjectStore } from '../objects/s3-store.js';
import { UploadSigner } from '../objects/signer.js';
import { firstAdmin, lookupKey } from './auth/keys.js';
import type { Config } from './config.js';
import { configError } from '../errors/codes.js';
import { Cors } from './http/cors.js';
import { Router } from './http/router.js';
import { DashboardAssets } from './http/static-dashboard.js';
import { createHttpServer, pickAdapter } from './http/server.js';
import type { HttpServer, Request } from './http/types.js';
import { Metrics } from './metrics.js';
import { datasetRoutes } from './routes/datasets.js';
import { bearerToken, SessionTokens } from './auth/sessions.js';
import { connectionRoutes } from './routes/connections.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { documentRoutes } from './routes/documents.js';
import { intelligenceRoutes } from './routes/intelligence.js';
import { jobRoutes } from './routes/jobs.js';
import { opsRoutes } from './routes/ops.js';
import { scheduleRoutes } from './routes/schedules.js';
import { secretRoutes } from './routes/secrets.js';
import { sessionRoutes } from './routes/sessions.js';
import { sourceConfigComponents, sourceRoutes } from './routes/sources.js';
import { uploadRoutes } from './routes/uploads.js';
import { vectorRoutes } from './routes/vectors.js';
import { internalRoutes } from './routes/internal.js';
import { joinCluster } from './cluster-node.js';

export interface Service {
  url: string;
  port: number;
  /** The HTTP adapter serving: 'uWebSockets.js' or 'node:http'. */
  adapter: string;
  /** Why that adapter: the uWS binary that loaded, or why none did. */
  adapterDetail: string;
  /** Where the local store's upload URLs point (the main URL unless a second listener takes uploads). */
  uploadUrl: string;
  /** The admin key, when this start created it (first start on an empty data directory). */
  createdAdminKey?: string;
  close(): Promise<void>;
}

/** What tests change that no user setting does. */
export interface ServiceHooks {
  /** The schedules' clock (a DST change without waiting for one). */
  now?: () => Date;
  /** Where the dashboard's build is read from (an empty directory: the page when it is not built). */
  dashboardDir?: string;
}

export async function startService(config: Config, hooks: ServiceHooks = {}): Promise<Service> {
  const now = hooks.now ?? (() => new Date());
  // An adapter that cannot serve here (uws asked, no binary) fails the start before anything opens.
  const adapter = pickAdapter(config.httpAdapter);
  checkDataDir(config.dataDir);
  // A bad master key fails the start before anything is opened.
  const masterKey = loadMasterKey(config.dataDir, config.masterKey);
  const store = new ControlStore(config.dataDir);
  // Cluster mode: the catalog is the cluster's before anything reads or writes it.
  const cluster = config.cluster ? await joinCluster(config.cluster, store).catch(async (e: unknown) => {
        await store.close();
        throw e;
      }) : undefined;
  const secrets = new SecretStore(store, masterKey);
  const createdAdminKey = await firstStart(store, config.dataDir);
  const engine = await Engine.open({ path: join(config.dataDir, 'engine') });
  const shards = new ShardPool({ threads: config.searchThreads });
  const signer = config.s3 ? undefined : UploadSigner.open(config.dataDir);
  const objects: ObjectStore = config.s3 ? new S3ObjectStore(config.s3, join(config.dataDir, 'staging')) : new LocalObjectStore(config.dataDir, signer!);
  const served = cluster ? await cluster.serve(engine, shards, store, objects, join(config.dataDir, 'staging')) : undefined;
  const metrics = new Metrics();
  const embedder = new Embedder(config.embeddings, (org, ref) => secrets.reveal(org, ref), (p, n, cached) => metrics.observeEmbedding(p, n, cached));
  const datasets = new DatasetService(store, engine, {
    managedEmbeddings: embedder.managedConfigured,
    provisionDelayMs: config.provisionDelayMs,
    ...(cluster ? { placement: cluster.placement } : {}),
  });
  datasets.resume();
  cluster?.catalog.onChange((changes) => {
    for (const c of changes) if (c.db === 'externalIds' && c.value !== undefined) datasets.externalIdsWritten(String((c.key as unknown[])[0]));
  });
  const jobs: JobQueue = cluster ? cluster.jobs : new LmdbJobQueue(store);
  const parquet = new ParquetPool();
  const rerank = new RerankProviders(config.rerank, (org, ref) => secrets.reveal(org, ref));
  const search = new SearchService(datasets, shards, embedder, rerank, served?.router);
  // The answer tools' reads beside search: the engine dataset's rows, or in a cluster its shards'.
  const rowsOf = (r: DatasetRecord): DatasetRows => (served ? served.router.rows(r) : engineRows(datasets.engineOf(r)));
  const writes = new VectorWrites(datasets, embedder, served?.router);

  // Ingestion: sources read by connectors, parsed on worker threads, embedded and indexed by jobs.
  const uploads = new UploadJobs(jobs, objects, signer);
  // Bytes of items being parsed when the process stopped: their jobs fetch them again.
  const sourceStaging = join(config.dataDir, 'staging', 'sources');
  rmSync(sourceStaging, { recursive: true, force: true });
  const parse = new ParsePool({ threads: config.ingest.parseThreads });
  let listening = '';
  const connections = new ConnectionService(new ConnectionStore(store), secrets, {
    providers: config.oauth,
    callbackUrl: () => `${config.publicUrl ?? listening}/connections/callback`,
    // In a cluster a refresh is single-flight across the nodes: a rotated refresh token is good once.
    ...(cluster ? { exclusive: cluster.exclusive } : {}),
  });
  const connectionTokens: ConnectionTokens = connections;
  const google = new GoogleTokens(config.ingest.googleTokenUrl, connectionTokens);
  const connectors: Connectors = redacting({
    file_upload: new FileUploadConnector(jobs, objects, config.ingest.maxFileBytes),
    s3: new S3Connector(sourceStaging, config.ingest.allowPrivateNetwork),
    github: new GitHubConnector(sourceStaging, config.ingest.githubApp),
    gcs: new GcsConnector(sourceStaging, config.ingest.gcsApiUrl, google),
    gdrive: new DriveConnector(sourceStaging, config.ingest.driveApiUrl, google),
    gitlab: new GitLabConnector(sourceStaging, config.ingest.allowPrivateNetwork, connectionTokens),
    jira: new JiraConnector(sourceStaging, config.ingest.atlassianApiUrl, connectionTokens),
    confluence: new ConfluenceConnector(sourceStaging, config.ingest.atlassianApiUrl, config.ingest.allowPrivateNetwork, connectionTokens),
    web: new WebConnector({ stagingDir: sourceStaging, allowPrivateNetwork: config.ingest.allowPrivateNetwork, parse, politenessMs: config.ingest.webPolitenessMs }),
  }, (org, id) => connections.secretsOf(org, id));
  const sourceStore = new SourceStore(store, secrets);
  const scheduleStore = new ScheduleRecords(store);
  const documentStore = new DocumentStore(store);
  const sources = new SourceService(sourceStore, scheduleStore, jobs, connectors);
  const documents = new DocumentService(documentStore, objects);
  const ingestHandler = new IngestJobHandler(
    { queue: jobs, sources: sourceStore, connectors, documents: documentStore, datasets, embedder, writes, parse, schedules: scheduleStore, observe: (stage, ms, n) => metrics.observeStage(stage, ms, n) },
    { concurrency: config.ingest.concurrency, fileTimeoutMs: config.ingest.fileTimeoutMs, parseTimeoutMs: config.ingest.parseTimeoutMs },
  );
  // In a cluster a job's lease is the node's: a worker that lost its node lease loses its jobs on the same clock.
  const runner = new JobRunner(jobs, [new ParquetLoadHandler(jobs, objects, datasets, new ParquetLoader(parquet)), ingestHandler], config.cluster ? { leaseMs: config.cluster.leaseMs } : {});
  const bulkUploads = new BulkUploads(datasets, jobs, uploads, runner, objects);
  const ingest = new IngestJobs(jobs, uploads, runner, sources, datasets);
  const schedules = new ScheduleService(scheduleStore, jobs, ingest, sources, datasets, now);
  // In a cluster the queue keys jobs by schedule tick: each tick's job is made first (jobs/scheduler.ts).
  const scheduler = new Scheduler(scheduleStore, (due) => schedules.fire(due), { tickMs: config.scheduleTickMs, now, ...(cluster ? { fireFirst: true, refresh: () => cluster.catalog.sync() } : {}) });
  // Answers: questions over the datasets, as runs that stream, with chat sessions.
  const sessionStore = new SessionStore(store);
  // Runs are recorded as they go: in a cluster for every node, embedded on disk for the next process.
  const runs = new RunStore({ detachGraceMs: config.answers.detachGraceMs, maxRunningPerOrg: config.answers.maxRunningPerOrg, remote: cluster ? cluster.runs : new LocalRunLog(store) });
  const previews = new PreviewSigner(masterKey);
  const answers = new AnswerService(
    { datasets, rowsOf, search, documents: documentStore, sessions: sessionStore, runs, previews, revealSecret: (org, ref) => secrets.reveal(org, ref) },
    { maxTokens: config.answers.maxTokens, defaultMaxSteps: config.answers.defaultMaxSteps, defaultDeadlineSeconds: config.answers.defaultDeadlineSeconds, extractive: config.answers.extractive, llm: config.answers.llm },
  );
  datasets.onDelete(async (id) => {
    await documentStore.removeDataset(id);
    await scheduleStore.removeDataset(id);
    await uploads.removeDataset(id);
  });
  let server: HttpServer | undefined;
  const adapterName = () => server?.adapter ?? 'none';
  const snapshot = async () => {
    const all = scheduleStore.all();
    return {
      adapter: adapterName(),
      // In a cluster the local engine holds shard replicas: the counts are the dataset's, across its shards.
      vectors: cluster ? await cluster.datasetVectors().catch(() => []) : engine.listDatasets().map((d): [string, number] => [d.name, d.stats().vector_count]),
      jobs: await jobs.counts(),
      schedules: { total: all.length, enabled: all.filter((x) => x.enabled).length, ...schedules.counters },
    };
  };

  const sessionTokens = new SessionTokens(masterKey, store);
  const router = new Router(
    (req) => {
      const key = req.headers['x-api-key'];
      const record = key ? lookupKey(store, key.trim()) : undefined;
      return record ? { orgId: record.org_id, role: record.role, keyId: record.key_id } : undefined;
    },
    (req) => {
      const token = bearerToken(req.headers.authorization);
      return token ? sessionTokens.verify(token) : undefined;
    },
    config.cluster?.secret,
  );
  router.add(
    ...opsRoutes({ router, engine, metrics, snapshot, adapter: adapterName, schemas: sourceConfigComponents(), publicUrl: config.publicUrl, ...(cluster ? { cluster: () => cluster.status() } : {}) }),
    ...datasetRoutes(datasets),
    ...documentRoutes(datasets, documents),
    ...vectorRoutes({ datasets, writes, search, embedder, metrics }),
    ...secretRoutes(secrets),
    ...uploadRoutes({ bulk: bulkUploads, uploads, uploadBase: (req) => uploadBase(req) }),
    ...jobRoutes(jobs, runner, ingest),
    ...sourceRoutes(sources, ingest, (req) => uploadBase(req)),
    ...scheduleRoutes(schedules, jobs),
    ...connectionRoutes(connections),
    ...dashboardRoutes(sessionTokens, new SourcePreviews(sourceStore, connectors)),
    ...intelligenceRoutes({ answers, runs, datasets, rowsOf, previews, streamTokens: new StreamTokens(masterKey) }),
    ...sessionRoutes(new SessionService(sessionStore, datasets)),
    ...(served?.host ? internalRoutes(served.host) : []),
  );
  // In a cluster, every request sees what was committed through any node before it began: the
  // node's catalog copy is brought to the head first (one query, shared by the requests that
  // arrive meanwhile). Internal calls carry the catalog seq they need; liveness and metrics are
  // this node's own and answer while the database is away.
  if (cluster) {
    const local = new Set(['/healthz', '/metrics', '/openapi.json']);
    router.beforeRoute = (route) => (route.auth === 'cluster' || local.has(route.path) ? Promise.resolve() : cluster.catalog.fresh());
  }
  const cors = new Cors(config.corsOrigins);
  const dashboard = new DashboardAssets(hooks.dashboardDir);
  const handler = async (req: Request) => {
    const preflight = cors.preflight(req, (path) => router.methodsOf(path));
    if (preflight) return preflight;
    const { response, pattern, requestId } = dashboard.answer(req) ?? (await router.handle(req));
    cors.decorate(req, response);
    const ms = Number(process.hrtime.bigint() - req.startedAt) / 1e6;
    metrics.observeRequest(req.method, pattern, response.status, ms);
    if (config.logRequests) console.error(`${req.method} ${req.path} ${response.status} ${ms.toFixed(2)}ms ${requestId}`);
    return response;
  };
  const serverOptions = { maxBodyBytes: config.maxBodyBytes, streams: (method: string, path: string) => router.streams(method, path) };
  // uWebSockets.js refuses a Content-Length of ten digits or more (1 GB and up), and Parquet files
  // go to 5 GB: the local store's upload URLs point at a node:http listener of the same routes.
  let uploadServer: HttpServer | undefined;
  const closeAll = async () => {
    await server?.close();
    await uploadServer?.close();
    await runs.close();
    await scheduler.close();
    await runner.close();
    await parse.close();
    await parquet.close();
    await cluster?.close();
    await shards.close();
    await embedder.close();
    await engine.close();
    await store.close();
  };
  let port: number;
  let uploadPort: number;
  try {
    server = createHttpServer(handler, { ...serverOptions, adapter });
    port = await listenOn(server, config.host, config.port, '--port / SABLE_PORT');
    uploadPort = port;
    if (server.adapter !== 'node:http' && !config.s3) {
      uploadServer = createHttpServer(handler, { ...serverOptions, adapter: { node: 'the upload listener' } });
      uploadPort = await listenOn(uploadServer, config.host, config.uploadPort ?? (config.port === 0 ? 0 : port + 1), '--upload-port / SABLE_UPLOAD_PORT (the upload listener; default the port + 1)');
    }
  } catch (e) {
    await closeAll();
    throw e;
  }
  listening = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const uploadBase = (req: Request) => config.publicUploadUrl ?? `http://${hostOf(req.headers.host, config.host)}:${uploadPort}`;
  // In a cluster, any node with the worker role takes jobs from the shared queue.
  if (!config.cluster || config.cluster.roles.includes('worker')) {
    runner.start();
    scheduler.start();
  }
  return {
    url: `http://${config.host}:${port}`,
    port,
    uploadUrl: `http://${config.host}:${uploadPort}`,
    adapter: server.adapter,
    adapterDetail: server.detail,
    createdAdminKey,
    close: closeAll,
  };
}

/** The data directory, made if missing, or a start error that says what is wrong with it and how to move it. */
function checkDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'EACCES' || code === 'EPERM' ? 'this user may not write there' : code === 'ENOTDIR' || code === 'EEXIST' ? 'it (or a folder above it) is a file' : code === 'EROFS' ? 'the file system is read-only' : (e as Error).message;
    throw configError(`the data directory ${dir} cannot be used: ${why}; choose another with --data-dir / SABLE_DATA_DIR`);
  }
}

/** A listener on its port, or a start error that names the port and the setting that moves it. */
async function listenOn(server: HttpServer, host: string, port: number, setting: string): Promise<number> {
  try {
    return await server.listen(host, port);
  } catch (e) {
    // uWebSockets.js says only that it failed: then every cause is named.
    const why = { EADDRINUSE: 'the port is taken', EACCES: 'this user may not listen on that port', EADDRNOTAVAIL: 'the address is not one of this machine\'s' }[(e as NodeJS.ErrnoException).code ?? ''] ??
      'the port is taken, or this user may not listen on it, or the address is not one of this machine\'s';
    throw configError(`cannot listen on ${host}:${port}: ${why}; choose another with ${setting}`);
  }
}

/** The host part of a Host header (IPv6 brackets kept), or `fallback`. */
function hostOf(header: string | undefined, fallback: string): string {
  if (!header) return fallback;
  return header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0];
}

/**
 * On an empty catalog: the `default` organization and an admin key, written 0600 in the data
 * directory. In a cluster the catalog is shared: the first node to start makes them, in one
 * catalog transaction that checks for keys again (nodes starting together make one key).
 */
async function firstStart(store: ControlStore, dataDir: string): Promise<string | undefined> {
  const keyFile = join(dataDir, 'admin.key');
  if (store.keys.getKeysCount() > 0 || existsSync(keyFile)) return undefined;
  const made = await firstAdmin(store);
  if (!made) return undefined;
  writeFileSync(keyFile, made + '\n', { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  return made;
}
