// The soak harness of `npm run bench:soak` (bench/soak/), short: 16 clients for 12 s on 5k x 64
// against a real `sable serve` process, with the same operation mix and ingestion feeder.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OPS, quickOptions, type SoakOptions } from '../dist/bench/soak/config.js';
import { runSoak } from '../dist/bench/soak/harness.js';
import { markdown } from '../dist/bench/soak/report.js';
import { renderSvg } from '../dist/bench/soak/svg.js';

describe('soak harness', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-soak-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every operation against the service with no error, samples RSS and renders', async () => {
    const o: SoakOptions = {
      ...quickOptions(),
      mode: 'test',
      n: 5000,
      dim: 64,
      churn: 1000,
      clients: 16,
      seconds: 12,
      bucketSeconds: 2,
      ingestEverySeconds: 3,
      sampleMs: 500,
    };
    const r = await runSoak(o);

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

    const md = markdown(r, 'soak-test.svg');
    const svg = renderSvg(r);
    writeFileSync(join(dir, 'soak-test.md'), md);
    writeFileSync(join(dir, 'soak-test.svg'), svg);
    expect(md).toContain('## Summary');
    expect(md.split('\n').filter((l) => /^\| \d+–\d+ \|/.test(l))).toHaveLength(6);
    const text = readFileSync(join(dir, 'soak-test.svg'), 'utf8');
    expect(text.startsWith('<svg')).toBe(true);
    expect(text.trimEnd().endsWith('</svg>')).toBe(true);
    for (const k of OPS) expect(text).toContain(`>${k}</text>`);
    expect(text).not.toContain('NaN');
  });
});
