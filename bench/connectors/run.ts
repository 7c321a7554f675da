// `npm run bench:connectors`: the source connectors against the local protocol peers of the
// tests (test/peers/), each answering every request after a fixed latency (default 20 ms), as a
// distant service would.
//
//  1. Each connector alone, in process: list a source of N items (items/s), then fetch every item
//     with the pipeline's concurrency (2 files in flight, the service default) and with 8 (MB/s).
//     "overlap" is the time the same requests would take one at a time (requests x latency)
//     divided by the time they took: above 1, requests overlap.
//  2. Through `sable serve`: every source ingested into a dataset, then an incremental run over
//     the unchanged sources. Reported: content requests (bytes fetched) and chunks embedded in
//     the second run; the target is none where the source gives a change signal, and no
//     re-embedding anywhere.
//
//   --items=N      items per source (default 200 in process, N/2 through the service)
//   --latency=MS   peer latency (default 20)
//   --out=DIR      where the report goes (default bench/results)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connector, ConnectorContext, SourceItem } from '../../ingest/connectors/connector.js';
import { ConfluenceConnector } from '../../ingest/connectors/confluence.js';
import { GcsConnector } from '../../ingest/connectors/gcs.js';
import { DriveConnector } from '../../ingest/connectors/gdrive.js';
import { GitHubConnector } from '../../ingest/connectors/github.js';
import { GitLabConnector } from '../../ingest/connectors/gitlab.js';
import { GoogleTokens } from '../../ingest/connectors/google-auth.js';
import { JiraConnector } from '../../ingest/connectors/jira.js';
import { WebConnector } from '../../ingest/connectors/web.js';
import { ParsePool } from '../../ingest/parse/parse-pool.js';
import { startConfluence } from '../../testkit/peers/confluence.js';
import { startGoogle } from '../../testkit/peers/gcs.js';
import { startGitHub } from '../../testkit/peers/github.js';
import { startGitLab } from '../../testkit/peers/gitlab.js';
import { startJira } from '../../testkit/peers/jira.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { callerOf, serve } from '../service.js';

const args = new Map(process.argv.slice(2).map((a) => (a.includes('=') ? [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a.slice(2), 'true'])));
const N = Number(args.get('items') ?? 200);
const LATENCY = Number(args.get('latency') ?? 20);
const log = (m: string) => process.stderr.write(`[connectors] ${m}\n`);

/** A paragraph of about `bytes` bytes, different for each item. */
function text(i: number, bytes: number): string {
  const words = ['harbour', 'crane', 'ledger', 'signal', 'orchard', 'granite', 'lantern', 'meadow', 'copper', 'violet'];
  let out = `Item ${i} of the benchmark corpus.`;
  for (let k = 0; out.length < bytes; k++) out += ` ${words[(i * 7 + k * 3) % words.length]}`;
  return out + '.';
}

async function startSite(items: number, bytes: number, latency: number) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    setTimeout(() => {
      requests.push(req.url!);
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${Array.from({ length: items }, (_, i) => `<a href="/p/${i}">${i}</a>`).join(' ')}</body></html>`);
      const m = /^\/p\/(\d+)$/.exec(req.url!);
      if (!m) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html', etag: `"p${m[1]}"` }).end(`<html><head><title>Page ${m[1]}</title></head><body><p>${text(Number(m[1]), bytes)}</p></body></html>`);
    }, latency);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

interface Peers {
  web: Awaited<ReturnType<typeof startSite>>;
  github: Awaited<ReturnType<typeof startGitHub>>;
  gitlab: Awaited<ReturnType<typeof startGitLab>>;
  jira: Awaited<ReturnType<typeof startJira>>;
  confluence: Awaited<ReturnType<typeof startConfluence>>;
  google: Awaited<ReturnType<typeof startGoogle>>;
}

async function startPeers(items: number, bytes: number): Promise<Peers> {
  const web = await startSite(items, bytes, LATENCY);
  const github = await startGitHub({ appId: '1', installationId: 9, pageSize: 100, latencyMs: LATENCY });
  github.repos.set('acme/docs', {
    full: 'acme/docs', defaultBranch: 'main', installed: true, pulls: [], commits: [],
    branches: new Map([['main', { date: new Date().toISOString(), files: new Map(Array.from({ length: items }, (_, i) => [`docs/f${i}.md`, text(i, bytes)])) }]]),
  });
  const gitlab = await startGitLab({ tokens: new Set(['glpat']), pageSize: 100, latencyMs: LATENCY });
  gitlab.projects.push({
    id: 1, path: 'acme/docs', group: 'acme', defaultBranch: 'main', mergeRequests: [], commits: [],
    branches: new Map([['main', { date: new Date().toISOString(), files: new Map(Array.from({ length: items }, (_, i) => [`docs/f${i}.md`, text(i, bytes)])) }]]),
  });
  const jira = await startJira({ cloudId: 'c1', tokens: new Set(['jt']), pageSize: 100, latencyMs: LATENCY });
  for (let i = 0; i < items; i++) jira.issues.push({ id: String(1000 + i), key: `OPS-${i}`, summary: `Issue ${i}`, description: text(i, bytes), status: 'Open', updated: '2026-11-01T00:00:00.000+0000', comments: [] });
  const confluence = await startConfluence({ cloudId: 'c1', basic: { user: 'u', token: 't' }, tokens: new Set(), pageSize: 100, latencyMs: LATENCY });
  for (let i = 0; i < items; i++) confluence.pages.push({ id: String(i + 1), space: 'ENG', title: `Page ${i}`, html: `<p>${text(i, bytes)}</p>`, version: 1, attachments: [] });
  const google = await startGoogle({ pageSize: 100, latencyMs: LATENCY });
  google.buckets.set('docs', new Map(Array.from({ length: items }, (_, i) => [`docs/f${i}.txt`, { bytes: Buffer.from(text(i, bytes)), contentType: 'text/plain', generation: 1 }])));
  for (let i = 0; i < items; i++) google.driveFiles.push({ id: `d${i}`, name: `f${i}.txt`, mimeType: 'text/plain', parent: 'root', content: text(i, bytes), version: 1 });
  return { web, github, gitlab, jira, confluence, google };
}

const noConnections = { accessToken: async () => Promise.reject(new Error('no connections in this bench')) };

/** Every source of the bench: its config, and which of the peer's requests carry content. */
function sources(p: Peers) {
  return {
    web: { config: { start_urls: [`${p.web.url}/`], max_depth: 1, max_pages: N + 1, allowed_domains: [], include_assets: false, max_assets_per_page: 0, headers: {}, sync_mode: 'incremental' }, content: () => p.web.requests.filter((r) => r.startsWith('/p/')).length },
    github: { config: { installation_id: 9, repositories: ['acme/docs'], ref_mode: 'default', refs: [], excluded_refs: [], active_branch_days: 7, include_pull_requests: false, include_review_threads: false, include_direct_commits: false, include_globs: ['**/*'], exclude_globs: [], max_file_size_bytes: 1_000_000, sync_mode: 'incremental' }, content: () => p.github.requests.filter((r) => r.path.includes('/git/blobs/')).length },
    gitlab: { config: { groups: [], projects: ['acme/docs'], auth_mode: 'token', access_token: 'glpat', gitlab_url: p.gitlab.url, ref_mode: 'default', refs: [], excluded_refs: [], active_branch_days: 7, include_merge_requests: false, include_review_threads: false, include_direct_commits: false, include_globs: ['**/*'], exclude_globs: [], max_file_size_bytes: 1_000_000, sync_mode: 'incremental' }, content: () => p.gitlab.requests.filter((r) => r.path.includes('/repository/blobs/')).length },
    jira: { config: { cloud_id: 'c1', access_token: 'jt', project_keys: ['OPS'], include_comments: false, sync_mode: 'incremental' }, content: () => p.jira.requests.filter((r) => /\/issue\/\d+(\?|$)/.test(r.path)).length },
    confluence: { config: { base_url: `${p.confluence.url}/wiki`, auth_mode: 'basic', username: 'u', api_token: 't', spaces: ['ENG'], include_attachments: false, sync_mode: 'incremental' }, content: () => p.confluence.requests.filter((r) => r.path.includes('body-format=storage')).length },
    gcs: { config: { bucket: 'docs', prefix: 'docs/', auth_mode: 'service_account', service_account_json: p.google.serviceAccount, file_patterns: ['*.txt'], sync_mode: 'incremental' }, content: () => p.google.requests.filter((r) => r.path.includes('alt=media') && r.path.includes('/storage/')).length },
    gdrive: { config: { folder_ids: ['root'], auth_mode: 'service_account', service_account_json: p.google.serviceAccount, sync_mode: 'incremental' }, content: () => p.google.requests.filter((r) => r.path.includes('/drive/') && r.path.includes('alt=media')).length },
  };
}

interface InProcessRow {
  type: string;
  items: number;
  listSeconds: number;
  fetch: { concurrency: number; seconds: number; megabytes: number; overlap: number }[];
}

async function inProcess(p: Peers, staging: string, parse: ParsePool): Promise<InProcessRow[]> {
  const google = new GoogleTokens(`${p.google.url}/token`, noConnections);
  const connectors: Record<string, Connector> = {
    web: new WebConnector({ stagingDir: staging, allowPrivateNetwork: true, parse, politenessMs: 0 }),
    github: new GitHubConnector(staging, { apiUrl: p.github.url, appId: '1', privateKey: p.github.privateKey }),
    gitlab: new GitLabConnector(staging, true, noConnections),
    jira: new JiraConnector(staging, p.jira.url, noConnections),
    confluence: new ConfluenceConnector(staging, p.jira.url, true, noConnections),
    gcs: new GcsConnector(staging, p.google.url, google),
    gdrive: new DriveConnector(staging, `${p.google.url}/`, google),
  };
  const rows: InProcessRow[] = [];
  for (const [type, s] of Object.entries(sources(p))) {
    const connector = connectors[type];
    const ctx: ConnectorContext = { orgId: 'bench', sourceId: `bench-${type}`, config: s.config, state: {}, signal: new AbortController().signal };
    const t0 = performance.now();
    const items: SourceItem[] = [];
    for await (const item of connector.list(ctx)) items.push(item);
    const listSeconds = (performance.now() - t0) / 1000;
    const row: InProcessRow = { type, items: items.length, listSeconds, fetch: [] };
    // The web connector keeps the pages it read while listing (a job parses those): the fetch
    // rounds here measure its fetch path, so they start without them.
    await connector.finished?.(ctx);
    for (const concurrency of [2, 8]) {
      const before = s.content();
      let bytes = 0;
      let next = 0;
      const t1 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < items.length) {
            const item = items[next++];
            const staged = await connector.fetch(ctx, { file_name: item.name, file_path: item.path, content_type: item.contentType, item: { id: item.id, url: item.url, version: item.version } });
            bytes += statSync(staged.path).size;
            await staged.release();
          }
        }),
      );
      const seconds = (performance.now() - t1) / 1000;
      // Requests each fetch made to the peer, one at a time, would take this long at the peer's latency.
      const requests = Math.max(1, s.content() - before);
      row.fetch.push({ concurrency, seconds, megabytes: bytes / 2 ** 20, overlap: (requests * LATENCY) / 1000 / seconds });
    }
    rows.push(row);
    log(`${type}: ${items.length} items listed in ${listSeconds.toFixed(2)} s; fetched in ${row.fetch.map((f) => `${f.seconds.toFixed(2)} s (x${f.concurrency})`).join(', ')}`);
  }
  return rows;
}

interface ServiceRow {
  type: string;
  documents: number;
  firstChunks: number;
  firstContent: number;
  secondContent: number;
  secondEmbedded: number;
  secondMessage: string;
}

async function throughService(p: Peers): Promise<ServiceRow[]> {
  const s = await serve('sable-bench-connectors-', [
    '--allow-private-network', 'true', '--web-politeness-ms', '0',
    '--github-api-url', p.github.url, '--github-app-id', '1', '--github-app-key-file', writeKey(p.github.privateKey),
    '--atlassian-api-url', p.jira.url, '--gcs-api-url', p.google.url, '--gdrive-api-url', `${p.google.url}/`, '--google-token-url', `${p.google.url}/token`,
  ]);
  const call = callerOf(s);
  const embedded = async () => Number(/^sable_ingest_stage_items_total\{stage="embed"\} (\d+)/m.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1] ?? 0);
  const rows: ServiceRow[] = [];
  try {
    for (const [type, src] of Object.entries(sources(p))) {
      const ds = await call('POST', '/datasets', { name: `bench-${type}` });
      await call('POST', `/datasets/${ds.id}/ensure-engine`);
      const source = await call('POST', '/ingestion/sources', { source_type: type, name: type, config: src.config });
      const run = async () => {
        const job = await call('POST', '/ingestion/jobs', { source_id: source.id, dataset_id: ds.id });
        for (;;) {
          const j = await call('GET', `/ingestion/jobs/${job.job_id}`);
          if (j.status === 'completed' || j.status === 'failed') return j;
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const c0 = src.content();
      const first = await run();
      const c1 = src.content();
      const e1 = await embedded();
      const second = await run();
      const stats = await call('GET', `/datasets/${ds.id}/stats`);
      rows.push({ type, documents: first.documents_processed, firstChunks: stats.vector_count, firstContent: c1 - c0, secondContent: src.content() - c1, secondEmbedded: (await embedded()) - e1, secondMessage: second.message });
      log(`${type}: ${first.message} | second run: ${second.message}`);
    }
  } finally {
    await s.stop();
  }
  return rows;
}

function writeKey(pem: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sable-bench-key-'));
  writeFileSync(join(dir, 'app.pem'), pem);
  return join(dir, 'app.pem');
}

async function main(): Promise<void> {
  const staging = mkdtempSync(join(tmpdir(), 'sable-bench-staging-'));
  const parse = new ParsePool({ threads: 1 });
  const load0 = loadavg()[0];
  log(`${N} items per source, ${LATENCY} ms peer latency`);
  const big = await startPeers(N, 4096);
  const inproc = await inProcess(big, staging, parse);
  await Promise.all(Object.values(big).map((x) => x.close()));
  const small = await startPeers(Math.max(10, Math.floor(N / 2)), 400);
  const service = await throughService(small);
  await Promise.all(Object.values(small).map((x) => x.close()));
  await parse.close();
  rmSync(staging, { recursive: true, force: true });

  const cpu = cpuInfo();
  const lines = [
    '# Connectors against local peers',
    '',
    `Commit ${gitCommit()}, ${cpu.model} (${cpu.cores} CPUs), load average ${load0.toFixed(2)} at the start; peers answer after ${LATENCY} ms (test/peers/, and a local site for web).`,
    '',
    `## Each connector alone (in process), ${N} items of about 4 KB`,
    '',
    'overlap: the fetch requests one at a time at the peer latency, divided by the time taken (above 1: requests overlap). The web',
    "connector's listing is its crawl (4 pages in flight); in a job, the pages read while crawling are parsed without a second fetch.",
    '',
    '| connector | items | list s | items/s listed | fetch s (x2) | MB/s (x2) | overlap (x2) | fetch s (x8) | MB/s (x8) | overlap (x8) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...inproc.map((r) => {
      const [a, b] = r.fetch;
      return `| ${r.type} | ${r.items} | ${r.listSeconds.toFixed(2)} | ${(r.items / r.listSeconds).toFixed(0)} | ${a.seconds.toFixed(2)} | ${(a.megabytes / a.seconds).toFixed(2)} | ${a.overlap.toFixed(1)} | ${b.seconds.toFixed(2)} | ${(b.megabytes / b.seconds).toFixed(2)} | ${b.overlap.toFixed(1)} |`;
    }),
    '',
    `## Through \`sable serve\`: a full run, then an incremental run over the unchanged sources (${Math.max(10, Math.floor(N / 2))} items each)`,
    '',
    '| connector | documents | chunks | content requests, run 1 | content requests, run 2 | chunks embedded, run 2 | run 2 says |',
    '|---|---|---|---|---|---|---|',
    ...service.map((r) => `| ${r.type} | ${r.documents} | ${r.firstChunks} | ${r.firstContent} | ${r.secondContent} | ${r.secondEmbedded} | ${r.secondMessage} |`),
    '',
    'The web connector reads every page again on a re-crawl (a page must be read to find its links); unchanged pages are not parsed nor embedded again.',
    '',
  ];
  const out = args.get('out') ?? join(paths.root, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'connectors.md'), lines.join('\n'));
  writeFileSync(join(out, 'connectors.json'), JSON.stringify({ commit: gitCommit(), items: N, latencyMs: LATENCY, inProcess: inproc, service }, null, 2));
  process.stdout.write(lines.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
