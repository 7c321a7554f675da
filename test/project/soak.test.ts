// The soak harness of `npm run bench:soak` (bench/soak/), short (`--test`): 16 clients for 12 s
// on 5k x 64 against a real `sable serve` process, with the same operation mix and ingestion
// feeder. The bench runs as users run it, a command, so the tests import nothing of bench/.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const OPS = ['search', 'upsert', 'delete', 'read', 'status'] as const;
type Ops = (typeof OPS)[number];
interface SoakRun {
  options: { n: number; churn: number };
  errorsTotal: number;
  errorExamples: Record<string, string>;
  total: Record<Ops, { ok: number }>;
  buckets: unknown[];
  feeder: { jobs: number; completed: number; codes: unknown };
  samples: { rssMB: number }[];
  rss: { slopeMBPerMin: number };
  datasetEnd: { vector_count: number } | null;
}

describe('soak harness', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-soak-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every operation against the service with no error, samples RSS and renders', async () => {
    const run = join(resolve(import.meta.dirname, '..', '..'), 'dist', 'bench', 'soak', 'run.js');
    await promisify(execFile)(process.execPath, [run, '--test', `--out=${dir}`], { maxBuffer: 1 << 24 });
    const r = JSON.parse(readFileSync(join(dir, 'soak-test.json'), 'utf8')) as SoakRun;
    const o = r.options;

    expect(r.errorsTotal, JSON.stringify({ examples: r.errorExamples, feeder: r.feeder.codes })).toBe(0);
    for (const k of OPS) expect(r.total[k].ok, `${k} answered`).toBeGreaterThan(0);
    expect(r.buckets).toHaveLength(6);
    expect(r.feeder.jobs).toBeGreaterThanOrEqual(2);
    expect(r.feeder.completed).toBe(r.feeder.jobs);
    expect(r.samples.length).toBeGreaterThanOrEqual(10);
    expect(r.samples.every((s) => s.rssMB > 0)).toBe(true);
    expect(Number.isFinite(r.rss.slopeMBPerMin)).toBe(true);
    expect(r.datasetEnd?.vector_count).toBeGreaterThanOrEqual(o.n);
    expect(r.datasetEnd?.vector_count).toBeLessThanOrEqual(o.n + o.churn);

    const md = readFileSync(join(dir, 'soak-test.md'), 'utf8');
    expect(md).toContain('## Summary');
    expect(md.split('\n').filter((l) => /^\| \d+–\d+ \|/.test(l))).toHaveLength(6);
    const text = readFileSync(join(dir, 'soak-test.svg'), 'utf8');
    expect(text.startsWith('<svg')).toBe(true);
    expect(text.trimEnd().endsWith('</svg>')).toBe(true);
    for (const k of OPS) expect(text).toContain(`>${k}</text>`);
    expect(text).not.toContain('NaN');
  });
});
