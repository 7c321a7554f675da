#!/usr/bin/env node
// Start + smoke on the running Node, as a user meets the service: `npm start` on a fresh data
// directory, then /healthz names the adapter this Node should get, a dataset takes vectors and
// text and answers searches, /metrics names the adapter, and SIGTERM stops it cleanly.
// Run from a checkout after `npm install` (`.ci/on-node` runs it on Node 22 and 24).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The adapter each supported Node gets (README, "Node.js versions"). */
const EXPECTED_ADAPTER = { 20: 'uWebSockets.js', 22: 'node:http', 24: 'node:http' };
const major = Number(process.versions.node.split('.')[0]);
const dir = mkdtempSync(join(tmpdir(), 'sable-smoke-'));
const child = spawn('npm', ['start', '--', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
let out = '';
let err = '';
child.stdout.on('data', (c) => (out += c));
child.stderr.on('data', (c) => (err += c));
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));

function fail(message) {
  console.error(`smoke: ${message}\n--- stdout\n${out}--- stderr\n${err}`);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
}

async function until(what, test, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = test();
    if (v) return v;
    if (Date.now() > end) fail(`timed out waiting for ${what}`);
    if (child.exitCode !== null) fail(`the service exited (${child.exitCode}) while waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const url = (await until('the listening line', () => /sable listening on (\S+)/.exec(out)))[1];
const adapterLine = (await until('the adapter line', () => /sable: http adapter .*/.exec(err)))[0];
const key = readFileSync(join(dir, 'admin.key'), 'utf8').trim();

async function call(method, path, body) {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) fail(`${method} ${path} answered ${res.status}: ${text}`);
  return res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
}

const health = await call('GET', '/healthz');
const want = EXPECTED_ADAPTER[major];
if (health.node !== process.version) fail(`/healthz says node ${health.node}, the service runs on ${process.version}`);
if (want && health.adapter !== want) fail(`Node ${major} should serve on ${want}; /healthz says ${health.adapter}`);
if (!adapterLine.includes(`http adapter ${health.adapter} (`)) fail(`the start line does not name ${health.adapter}: ${adapterLine}`);

const vectors = await call('POST', '/datasets', { name: 'smoke', dim: 3, metric: 'cosine' });
await call('POST', `/datasets/${vectors.id}/ensure-engine`);
await call('POST', `/datasets/${vectors.id}/insert`, { vectors: [{ id: 1, values: [1, 0, 0] }, { id: 'two', values: [0, 1, 0] }] });
const hits = await call('POST', `/datasets/${vectors.id}/search`, { query: [0.9, 0.1, 0], top_k: 2 });
if (hits.results?.[0]?.id !== 1 || hits.results?.[1]?.external_id !== 'two') fail(`vector search answered ${JSON.stringify(hits)}`);

const text = await call('POST', '/datasets', { name: 'smoke-text' });
await call('POST', `/datasets/${text.id}/ensure-engine`);
await call('POST', `/datasets/${text.id}/insert`, {
  vectors: [
    { id: 1, metadata: { text: 'Boil pasta in plenty of salted water.' } },
    { id: 2, metadata: { text: 'Deploy the app with cf push.' } },
  ],
});
const found = await call('POST', `/datasets/${text.id}/search`, { query_text: 'how do I cook spaghetti?', top_k: 1 });
if (found.results?.[0]?.id !== 1) fail(`text search (local model) answered ${JSON.stringify(found)}`);

const metrics = await call('GET', '/metrics');
if (!metrics.includes(`sable_info{adapter="${health.adapter}",node="${process.version}"} 1`)) fail('/metrics does not name the adapter and Node');

// To the process group, as a terminal's Ctrl-C or a service manager does (npm ends by the
// signal itself and does not wait for the service): the service must be gone.
process.kill(-child.pid, 'SIGTERM');
const code = await exited;
if (code !== 0 && code !== 'SIGTERM') fail(`npm start exited with ${code} on SIGTERM`);
const up = () => fetch(url + '/healthz').then(() => true, () => false);
const stopBy = Date.now() + 30_000;
while (await up()) {
  if (Date.now() > stopBy) fail('the service still answers 30 s after SIGTERM');
  await new Promise((r) => setTimeout(r, 100));
}
rmSync(dir, { recursive: true, force: true });
console.log(`smoke: Node ${process.version}, ${adapterLine.replace(/^sable: /, '')}: healthz, vector and text search, metrics, clean stop`);
