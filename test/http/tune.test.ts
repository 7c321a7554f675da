// `sable tune` as a user runs it: the command against a running service over HTTP, on a dataset
// with a built index. Its exact answers are checked against brute force computed here, its sweep
// against what it reports, and --apply against the SLA the service then holds.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { clustered, row } from '../support/data.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');
const DIM = 32;
const N = 8000;

describe('sable tune', () => {
  let dir: string;
  let out: string;
  let svc: Service;
  let key: string;
  let id: string;
  const data = clustered(N, DIM, 7);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(svc.url + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return (await res.json()) as any;
  };
  const tune = (args: string[]) =>
    promisify(execFile)(process.execPath, [CLI, 'tune', '--url', svc.url, '--api-key', key, '--out', out, ...args], { encoding: 'utf8' }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-tune-'));
    out = mkdtempSync(join(tmpdir(), 'sable-tune-out-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir }, {}));
    key = svc.createdAdminKey!;
    id = (await call('POST', '/datasets', { name: 'tuned', dim: DIM, metric: 'cosine' })).id;
    await call('POST', `/datasets/${id}/ensure-engine`, {});
    await call('PUT', `/datasets/${id}/promotion-policy`, { max_buffer_vectors: 4000, max_buffer_age_ms: 3_600_000 });
    for (let s = 0; s < N; s += 1000) {
      await call('POST', `/datasets/${id}/insert`, { vectors: Array.from({ length: 1000 }, (_, i) => ({ id: s + i, values: Array.from(row(data, DIM, s + i)) })) });
    }
    for (let i = 0; i < 600 && (await call('GET', `/datasets/${id}/index`)).status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await call('GET', `/datasets/${id}/index`)).status).toBe('ready');
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it('its exact answers are the brute-force top-k', async () => {
    const cos = (a: Float32Array, b: Float32Array) => {
      let d = 0, na = 0, nb = 0;
      for (let i = 0; i < DIM; i++) (d += a[i]! * b[i]!), (na += a[i]! * a[i]!), (nb += b[i]! * b[i]!);
      return 1 - d / Math.sqrt(na * nb);
    };
    for (const q of [3, 1777, 4242, 7999]) {
      const query = row(data, DIM, q).map((v, i) => v + (i % 3 === 0 ? 0.05 : -0.03));
      const exact = Array.from({ length: N }, (_, i) => ({ i, d: cos(query, row(data, DIM, i)) })).sort((a, b) => a.d - b.d || a.i - b.i).slice(0, 10).map((h) => h.i);
      // The settings sable tune's exhaustive search sends (control-plane/tune/sweep.ts).
      const got = await call('POST', `/datasets/${id}/search`, { query: Array.from(query), top_k: 10, nprobe_override: 1_000_000, rerank_depth_override: 1_000_000, include_metadata: false });
      expect(got.results.map((h: { id: number }) => h.id)).toEqual(exact);
    }
  });

  it('sweeps nprobe, reports recall against p50/p99, plots it, and applies the SLA of highest recall under the target', async () => {
    const r = await tune(['--dataset', id, '--sample', '40', '--concurrency', '2', '--requests', '80', '--target-p99', '1000', '--apply']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('| nprobe | recall@10 | search p50 µs | search p99 µs | request p50 ms | request p99 ms | req/s | errors |');
    const result = JSON.parse(readFileSync(join(out, `tune-${id}.json`), 'utf8'));
    const nlist = (await call('GET', `/datasets/${id}`)).tuning.nlist;
    const swept = result.results.map((s: { nprobe: number | null }) => s.nprobe);
    expect(swept[0]).toBe(null);
    expect(swept.at(-1)).toBe(nlist);
    expect(swept.slice(1, 4)).toEqual([1, 2, 4]);
    const recall = result.results.map((s: { recall: number }) => s.recall);
    expect(recall[1]).toBeLessThan(recall.at(-1));
    expect(recall.at(-1)).toBeGreaterThanOrEqual(0.99);
    for (const s of result.results) {
      expect(s.errors).toBe(0);
      expect(s.requests).toBe(80);
      expect(s.searchP99Us).toBeGreaterThanOrEqual(s.searchP50Us);
      expect(s.requestP99Ms * 1000).toBeGreaterThan(s.searchP50Us);
    }
    // Every setting met a 1 s target: the chosen one has the highest recall, with the fewest lists.
    const swept1 = result.results.filter((s: { nprobe: number | null }) => s.nprobe !== null);
    const best = Math.max(...swept1.map((s: { recall: number }) => s.recall));
    expect(result.choice.chosen.recall).toBe(best);
    expect(result.choice.chosen.nprobe).toBe(swept1.find((s: { recall: number }) => s.recall === best).nprobe);
    expect(result.applied).toBe(true);
    const sla = await call('GET', `/datasets/${id}/sla`);
    expect(sla).toMatchObject({ target_p99_us: 1_000_000, min_nprobe: result.choice.chosen.nprobe });
    const svg = readFileSync(join(out, `tune-${id}.svg`), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).not.toContain('NaN');
    expect(svg.match(/<circle /g)!.length).toBeGreaterThanOrEqual(2 * result.results.length);
    expect(readFileSync(join(out, `tune-${id}.md`), 'utf8')).toContain(`Applied: nprobe ${result.choice.chosen.nprobe} has the highest recall@k`);
  });

  it('sets nothing when no setting meets the target, and refuses bad flags with exit 2', async () => {
    const before = await call('GET', `/datasets/${id}/sla`);
    const r = await tune(['--dataset', id, '--sample', '10', '--requests', '20', '--nprobe', '1,2', '--target-p99', '0.001', '--apply']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('no setting met a search p99 of 1 µs');
    expect(await call('GET', `/datasets/${id}/sla`)).toMatchObject({ target_p99_us: before.target_p99_us, min_nprobe: before.min_nprobe });
    for (const [args, message] of [
      [['--dataset', id, '--apply'], '--apply needs --target-p99 MS'],
      [['--dataset', id, '--target-p99=-3'], '--target-p99 must be a positive number'],
      [['--dataset', id, '--nprob', '4'], 'unknown flag --nprob (did you mean --nprobe?)'],
      [['--sample', '3'], 'tune needs --dataset ID'],
    ] as const) {
      const bad = await tune([...args]);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr).toContain(message);
    }
    const missing = await tune(['--dataset', 'no-such-dataset', '--sample', '3']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404 dataset_not_found/);
  });
});
