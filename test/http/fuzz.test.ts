// Issue 17, hostile input: every route of the OpenAPI document gets requests generated from its
// request schema (fast-check), valid and mutated, from two organizations' keys, a member key, no
// key or a forged one; then the classic hostile requests, hostile Parquet files through the bulk
// routes and hostile documents through a file_upload source. The service runs as a child process
// on a fresh data directory. Throughout: it stays up, answers within the time bound, answers no
// 5xx but an upstream's 502 or a provisioning 503, answers every error as `{error, message}`, its
// RSS stays under the bound; and organization A's data is the same after the run as before it.
//
// SABLE_FUZZ_RUNS sets the generated cases per route (short by default, for `npm test`);
// SABLE_FUZZ_SEED replays a run; SABLE_FUZZ_REPORT=1 (npm run test:fuzz) writes
// bench/results/fuzz.md.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dereference } from '@readme/openapi-parser';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseOf, hintsOf, planOf, routesOf, type Pools, type RouteInfo } from '../support/fuzz/cases.js';
import * as classic from '../support/fuzz/classic.js';
import { hostileDocuments, hostileParquet, PARQUET, traversalNames } from '../support/fuzz/hostile-files.js';
import { FuzzReport } from '../support/fuzz/report.js';
import { Runner, type Answer, type Case } from '../support/fuzz/runner.js';
import { caller, DIM, scratchB, seed, snapshot, uploadDocuments, waitJob } from '../support/fuzz/seed.js';
import { adminKeyOf, startFuzzedService } from '../support/fuzz/service.js';

const RUNS = Number(process.env.SABLE_FUZZ_RUNS ?? 25);
const SEED = Number(process.env.SABLE_FUZZ_SEED ?? 17_017);
const LONG = process.env.SABLE_FUZZ_REPORT === '1';
const TIMEOUT_MS = 30_000;
const RSS_LIMIT = 1.5 * 2 ** 30;
const MAX_BODY = 64 * 2 ** 20;
/** Strings of the huge-string cases; hidden zip and PDF bombs expand to this many MiB. */
const HUGE = LONG ? 8 * 2 ** 20 : 2 * 2 ** 20;
const BOMB_MIB = LONG ? 4096 : 1024;
/** Random Parquet files (cuts, flips, footer fields) beside the fixed hostile ones. */
const PARQUET_RANDOM = LONG ? 120 : 6;
const ENV = { SABLE_PARSE_TIMEOUT_MS: '20000', SABLE_INGEST_FILE_TIMEOUT_MS: '60000' };

describe('hostile input (issue 17)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-fuzz-'));
  const report = new FuzzReport(SEED, RUNS);
  let run: Runner;
  let pools: Pools;
  let routes: RouteInfo[];
  let before: Record<string, unknown>;
  const call = caller(() => run.url);
  const problemsSoFar = () => report.problems.length;
  const crashesSoFar = () => report.crashes.length;
  /** B's datasets made by the run, oldest first: deleted beyond a few so a long run stays small. */
  const madeDatasets: string[] = [];

  /** What B's successful answers created joins the pools, so later cases name it. */
  const learn = async (c: Case, a: Answer | null) => {
    if (!a || a.status >= 300 || c.headers['x-api-key'] !== pools.keys.B || !a.json || typeof a.json !== 'object') return;
    const add = (name: string, value: unknown) => {
      if (typeof value !== 'string') return;
      const list = (pools.ids.B[name] ??= []);
      list.push(value);
      if (list.length > 40) list.splice(4, 1);
    };
    const j = a.json;
    if (c.route === 'POST /datasets' && a.status === 201) {
      add('datasetId', j.id);
      madeDatasets.push(j.id);
      if (madeDatasets.length > 12) {
        const old = madeDatasets.shift()!;
        await call(pools.keys.B, 'DELETE', `/datasets/${old}`);
      }
    }
    if (c.route === 'POST /ingestion/sources' && a.status === 201) add('sourceId', j.id);
    if (c.route === 'POST /ingestion/schedules' && a.status === 201) add('scheduleId', j.id);
    if (c.route === 'POST /intelligence/sessions' && a.status === 201) add('sessionId', j.id);
    if (c.route === 'POST /connections' && a.status === 201) add('connectionId', j.id);
    add('jobId', j.job_id);
    if (Array.isArray(j.uploads)) for (const u of j.uploads) add('token', String(u.upload_url).split('/').pop());
    add('runId', j.metadata?.run_id);
    if (Array.isArray(j.sources)) for (const s of j.sources) add('ref', s.preview_ref);
  };
  const send = async (c: Case) => {
    const a = await run.send(c);
    await learn(c, a);
    return a;
  };
  const newProblems = (from: number) => report.problems.slice(from).map((p) => `${p.route}: ${p.what} — ${p.request}`);

  beforeAll(async () => {
    const svc = await startFuzzedService(dir, ENV);
    expect(svc.linesStartingWith('sable-fuzz-fence: loaded').length, 'the service runs behind the loopback fence').toBeGreaterThan(0);
    // After a crash the service starts on another port, its upload listener too: learn it anew.
    const onRestart = async (r: Runner) => {
      const made = await call(pools.keys.B, 'POST', '/datasets', { name: `after-restart-${Date.now()}`, dim: 2 });
      await call(pools.keys.B, 'POST', `/datasets/${made.body.id}/ensure-engine`);
      const init = await call(pools.keys.B, 'POST', `/datasets/${made.body.id}/upload/init`, { files: [{ name: 'x.parquet', size_bytes: 1, content_type: PARQUET }] });
      if (init.status === 200) r.uploadUrl = new URL(init.body.uploads[0].upload_url).origin;
    };
    run = new Runner(svc, report, { timeoutMs: TIMEOUT_MS, env: ENV, onRestart });
    const seeded = await seed(call, dir, adminKeyOf(dir));
    pools = seeded.pools;
    run.uploadUrl = seeded.uploadUrl;
    before = await snapshot(call, pools.keys.A, pools.ids.A);
    // Request schemas are named components: the cases are made from the document with its $refs resolved.
    routes = routesOf(await dereference(await (await fetch(`${run.url}/openapi.json`)).json()));
    console.log(`fuzz: seed ${SEED} (SABLE_FUZZ_SEED replays it), ${RUNS} generated cases per route, ${routes.length} routes`);
  }, 180_000);

  afterAll(async () => {
    run?.stopSampling();
    report.notes.push(`Outbound connections the loopback fence refused (since the last start of the service): ${run?.svc.linesStartingWith('sable-fuzz-fence: refused').length ?? 0}.`);
    report.notes.push(`Requests sent again on a new connection after the first closed without an answer: ${run?.retried ?? 0}.`);
    const text = report.markdown([
      `Hostile files: ${PARQUET_RANDOM} random Parquet files beside the fixed ones; hidden zip and PDF bombs of ${BOMB_MIB} MiB; huge strings of ${HUGE / 2 ** 20} MiB.`,
    ]);
    console.log(text);
    if (LONG) {
      mkdirSync(join(__dirname, '..', '..', 'bench', 'results'), { recursive: true });
      writeFileSync(join(__dirname, '..', '..', 'bench', 'results', 'fuzz.md'), text);
    }
    if (run && run.svc.exit === null) run.svc.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers generated requests on every route within the contract', async () => {
    const from = problemsSoFar();
    const crashedBefore = crashesSoFar();
    const hints = hintsOf(pools);
    const plans = routes.map((r, k) => fc.sample(planOf(r, hints), { seed: SEED + k, numRuns: RUNS }));
    const forged = fc.sample(fc.constantFrom('sable_' + '0'.repeat(64), '', ' ', 'sable_', 'x'.repeat(8000), 'null', `sable_${'f'.repeat(63)}g`, '\u00ff\u00fe'), { seed: SEED, numRuns: RUNS * routes.length });
    let n = 0;
    for (let i = 0; i < RUNS; i++) {
      for (const [k, r] of routes.entries()) await send(caseOf(r, plans[k][i], pools, forged[n++]));
      expect(run.svc.rss() ?? 0, 'RSS of the service').toBeLessThan(RSS_LIMIT);
      if (LONG && (i + 1) % 100 === 0) console.log(`fuzz: round ${i + 1} of ${RUNS}, ${report.cases} requests, ${report.problems.length} problems, ${report.crashes.length} crashes, RSS ${((run.svc.rss() ?? 0) / 2 ** 20).toFixed(0)} MiB`);
    }
    expect(new Set([...report.routes.keys()].filter((k) => routes.some((r) => r.key === k))).size, 'every route was called').toBe(routes.length);
    expect(report.crashes.slice(crashedBefore)).toEqual([]);
    expect(newProblems(from)).toEqual([]);
  }, LONG ? 3_600_000 : 120_000);

  it('answers the classic hostile requests within the contract', async () => {
    const from = problemsSoFar();
    const crashedBefore = crashesSoFar();
    const x = { run, pools, send, huge: HUGE, long: LONG, b: await scratchB(call, pools.keys.B, 'classic') };
    const keys = [readFileSync(join(dir, 'admin.key'), 'utf8').trim(), ...(existsSync(join(dir, 'master.key')) ? [readFileSync(join(dir, 'master.key'), 'utf8').trim()] : [])];
    const groups: [string, () => Promise<unknown>][] = [
      ['bodies that are not JSON or not UTF-8', () => classic.bodyEncodings(x)],
      ['deep nesting', () => classic.nesting(x)],
      ['arrays of 10^6 items', () => classic.bigArrays(x)],
      ['NaN, Infinity, -0 and integers past 2^53', async () => {
        const { scoresOk } = await classic.specialNumbers(x);
        if (!scoresOk) report.problem('POST /datasets/{datasetId}/search', 'a search after NaN, Infinity and -0 did not score with finite numbers', '(see the cases before)');
      }],
      ['huge strings', () => classic.hugeStrings(x)],
      ['content types', () => classic.contentTypes(x)],
      ['bodies over the limit, lying lengths, malformed HTTP', () => classic.transport(x, MAX_BODY)],
      ['path traversal', () => classic.traversal(x, keys)],
      ['ids past a key length', () => classic.longIds(x)],
      ['runs resumed past their end', () => classic.resumes(x)],
    ];
    const took: string[] = [];
    for (const [name, group] of groups) {
      const t0 = Date.now();
      run.windowPeak = 0;
      await group();
      run.windowPeak = Math.max(run.windowPeak, run.svc.rss() ?? 0);
      took.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)} s (peak RSS ${(run.windowPeak / 2 ** 20).toFixed(0)} MiB)`);
    }
    report.notes.push(`Classic cases: ${took.join(', ')}.`);
    expect(run.svc.rss() ?? 0, 'RSS of the service').toBeLessThan(RSS_LIMIT);
    expect(report.crashes.slice(crashedBefore)).toEqual([]);
    expect(newProblems(from)).toEqual([]);
  }, LONG ? 1_800_000 : 180_000);

  it('fails hostile Parquet loads with a reason, one job at a time, and keeps serving', async () => {
    const from = problemsSoFar();
    const crashedBefore = crashesSoFar();
    const dsB = (await scratchB(call, pools.keys.B, 'parquet')).vectors;
    const files = hostileParquet(DIM, PARQUET_RANDOM, SEED);
    const outcomes: string[] = [];
    for (const [i, f] of files.entries()) {
      let jobId: string | undefined;
      if (i % 2 === 0) {
        // Every other multipart part names a file outside the storage (checked with the documents' names).
        const name = i % 4 === 0 ? `../../../../../../tmp/sable-fuzz-escape-${process.pid}-${f.name}` : f.name;
        const boundary = `fuzz${i}`;
        const body = Buffer.concat([
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\nContent-Type: ${PARQUET}\r\n\r\n`),
          Buffer.from(f.bytes),
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]);
        const a = await send({ route: 'POST /datasets/{datasetId}/upload', method: 'POST', path: `/datasets/${dsB}/upload`, headers: { 'x-api-key': pools.keys.B, 'content-type': `multipart/form-data; boundary=${boundary}` }, body, label: `Parquet ${f.label} (multipart)`, expect: [202] });
        jobId = a?.json?.job_id;
      } else {
        const init = await send({ route: 'POST /datasets/{datasetId}/upload/init', method: 'POST', path: `/datasets/${dsB}/upload/init`, headers: { 'x-api-key': pools.keys.B, 'content-type': 'application/json' }, body: JSON.stringify({ files: [{ name: f.name, size_bytes: f.bytes.length, content_type: PARQUET }] }), label: `Parquet ${f.label} (init)`, expect: [200] });
        if (!init) continue;
        await send({ route: 'PUT /uploads/{token}', method: 'PUT', path: new URL(init.json.uploads[0].upload_url).pathname, headers: { 'content-type': PARQUET }, body: Buffer.from(f.bytes), label: `Parquet ${f.label} (PUT)`, listener: 'upload', expect: [200] });
        await send({ route: 'POST /datasets/{datasetId}/upload/complete', method: 'POST', path: `/datasets/${dsB}/upload/complete`, headers: { 'x-api-key': pools.keys.B, 'content-type': 'application/json' }, body: JSON.stringify({ job_id: init.json.job_id, file_ids: [init.json.uploads[0].file_id] }), label: `Parquet ${f.label} (complete)`, expect: [200] });
        jobId = init.json.job_id;
      }
      if (!run.alive() || !jobId) continue;
      const job = await waitJob(call, pools.keys.B, jobId, 60_000).catch((e: Error) => ({ status: 'stuck', message: e.message }));
      const fileList = (await call(pools.keys.B, 'GET', `/ingestion/jobs/${jobId}/files`)).body.files ?? [];
      const failed = fileList.filter((x: { status: string }) => x.status === 'failed');
      outcomes.push(`${f.label}: ${job.status}${failed[0] ? ` (${failed[0].error_type}: ${String(failed[0].error_message ?? failed[0].error ?? '').slice(0, 80)})` : ''}`);
      if (job.status === 'stuck') report.problem('Parquet load', `job did not end: ${f.label}`, job.message);
      for (const x of failed) if (!x.error_type || typeof (x.error_message ?? x.error) !== 'string') report.problem('Parquet load', `a failed file without a reason: ${f.label}`, JSON.stringify(x));
      if (job.status === 'failed' && failed.length === 0 && !job.message) report.problem('Parquet load', `a failed job without a reason: ${f.label}`, JSON.stringify(job));
      expect(run.svc.rss() ?? 0, `RSS after ${f.label}`).toBeLessThan(RSS_LIMIT);
    }
    report.notes.push(`Parquet outcomes: ${outcomes.join('; ')}`);
    const search = await send({ route: 'POST /datasets/{datasetId}/search', method: 'POST', path: `/datasets/${dsB}/search`, headers: { 'x-api-key': pools.keys.B, 'content-type': 'application/json' }, body: JSON.stringify({ query: Array(DIM).fill(0.5), top_k: 5 }), label: 'a search after the hostile loads', expect: [200] });
    expect(search?.status).toBe(200);
    expect(report.crashes.slice(crashedBefore)).toEqual([]);
    expect(newProblems(from)).toEqual([]);
  }, LONG ? 1_800_000 : 240_000);

  it('fails hostile documents alone with a reason, and keeps uploaded names inside its storage', async () => {
    const from = problemsSoFar();
    const crashedBefore = crashesSoFar();
    const { text: textB, source: srcB } = await scratchB(call, pools.keys.B, 'documents');
    const marker = `sable-fuzz-escape-${process.pid}`;
    const docs = await hostileDocuments(BOMB_MIB);
    const named = traversalNames(marker).map((name, i) => ({ label: `name ${JSON.stringify(name.slice(0, 60))}`, name, type: 'text/plain', bytes: new TextEncoder().encode(`A note with a hostile name, number ${i}.`) }));
    const injected = { label: 'content type with CR LF', name: 'injected.txt', type: 'text/plain; x=\r\nX-Injected: 1', bytes: new TextEncoder().encode('The content type of this file carries a header.') };
    const all = [...docs, ...named, injected];
    const job = await uploadDocuments(call, pools.keys.B, srcB, textB, all, 300_000).catch((e: Error) => ({ status: 'stuck', message: e.message, job_id: '' }));
    expect(run.alive(), 'the service is up after the hostile documents').toBe(true);
    expect(job.status, JSON.stringify(job)).not.toBe('stuck');
    const files: any[] = (await call(pools.keys.B, 'GET', `/ingestion/jobs/${job.job_id}/files?limit=200`)).body.files ?? [];
    report.notes.push(`Documents: ${files.map((f) => `${JSON.stringify(String(f.file_name).slice(0, 40))}: ${f.status}${f.error_type ? ` (${f.error_type})` : ''}`).join('; ')}`);
    for (const d of docs) {
      const f = files.find((x) => x.file_name === d.name);
      if (!f) report.problem('document ingestion', `no file record for ${d.label}`, d.name);
      else if (d.expect && f.error_type !== d.expect) report.problem('document ingestion', `${d.label} ended ${f.status} (${f.error_type}), expected ${d.expect}`, JSON.stringify(f));
      else if (f.status !== 'failed' && f.status !== 'completed') report.problem('document ingestion', `${d.label} ended ${f.status}`, JSON.stringify(f));
      else if (f.status === 'failed' && !(f.error_type && (f.error_message ?? f.error))) report.problem('document ingestion', `${d.label} failed without a reason`, JSON.stringify(f));
    }
    // Nothing escaped: no file of the marker above the data directory, nor in the temp folder.
    for (const where of [tmpdir(), join(dir, '..'), '/tmp']) {
      const escaped = readdirSync(where).filter((n) => n.includes(marker));
      if (escaped.length) report.problem('document ingestion', `an uploaded name escaped to ${where}`, escaped.join(', '));
    }
    // Each document downloads with headers that carry nothing of its name or content type but text.
    const documents: any[] = (await call(pools.keys.B, 'GET', `/datasets/${textB}/documents?limit=200`)).body.documents ?? [];
    for (const d of documents) {
      for (const listener of ['main', 'upload'] as const) {
        await send({ route: 'GET /datasets/{datasetId}/documents/{documentId}/download', method: 'GET', path: `/datasets/${textB}/documents/${d.id}/download`, headers: { 'x-api-key': pools.keys.B }, label: `download of ${String(d.name ?? d.id).slice(0, 40)} (${listener})`, listener });
      }
    }
    expect(run.svc.rss() ?? 0, 'RSS after the hostile documents').toBeLessThan(RSS_LIMIT);
    expect(report.crashes.slice(crashedBefore)).toEqual([]);
    expect(newProblems(from)).toEqual([]);
  }, LONG ? 1_800_000 : 360_000);

  it("leaves organization A's data as it was, and stayed within its memory bound", async () => {
    expect(run.alive(), 'the service is up').toBe(true);
    const after = await snapshot(call, pools.keys.A, pools.ids.A);
    expect(after).toEqual(before);
    expect(report.peakRss, 'peak RSS of the service').toBeLessThan(RSS_LIMIT);
    expect(report.crashes).toEqual([]);
  }, 120_000);

  it('stops on SIGTERM within 30 s after all that', async () => {
    const t0 = Date.now();
    run.stopSampling();
    run.svc.child.kill('SIGTERM');
    await Promise.race([new Promise((r) => run.svc.child.once('exit', r)), new Promise((r) => setTimeout(r, 30_000))]);
    const stopped = run.svc.exit !== null || run.svc.child.exitCode !== null || run.svc.child.signalCode !== null;
    report.notes.push(stopped ? `Stopped on SIGTERM in ${((Date.now() - t0) / 1000).toFixed(1)} s.` : 'Did not stop within 30 s of SIGTERM.');
    expect(stopped, 'the service exits within 30 s of SIGTERM').toBe(true);
  }, 60_000);
});
