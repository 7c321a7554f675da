#!/usr/bin/env node
// `npm run test:crash`, last step: the figures each crash scenario wrote (test/support/crash.ts,
// one JSON file per scenario) as the markdown report bench/results/crash.md.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

const [from, to] = process.argv.slice(2);
const runs = readdirSync(from)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(from, f), 'utf8')));
if (runs.length === 0) throw new Error(`no crash figures in ${from}`);
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD']).toString().trim();
  } catch {
    return 'unknown';
  }
})();
const total = (k) => runs.reduce((s, r) => s + r[k], 0);
const lines = [
  '# Crash suite (`npm run test:crash`)',
  '',
  `Generated on ${new Date().toISOString()} at commit \`${commit}\`, ${cpus().length} cores, load average ${loadavg()[0].toFixed(2)} at the end.`,
  'Each scenario runs `sable serve` as a child process, drives it over HTTP, kills it with SIGKILL at random moments and starts it again on the same data directory (test/crash-*.test.ts; a failing run replays with the seed shown: `SABLE_CRASH_SEED=<seed>`).',
  '',
  '| scenario | kills | acknowledged writes checked | lost (target 0) | jobs or builds stuck (target 0) | details | seconds | seed |',
  '| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |',
  ...runs.map((r) => `| ${r.scenario} | ${r.kills} | ${r.acknowledgedChecked.toLocaleString('en-US')} | ${r.lost} | ${r.stuck} | ${Object.entries(r.details).map(([k, v]) => `${k}: ${typeof v === 'number' ? v.toLocaleString('en-US') : v}`).join('; ')} | ${r.seconds.toFixed(0)} | ${r.seed} |`),
  `| **all** | ${total('kills')} | ${total('acknowledgedChecked').toLocaleString('en-US')} | ${total('lost')} | ${total('stuck')} | | ${total('seconds').toFixed(0)} | |`,
  '',
  'writes: four clients insert, upsert and delete batches while partitions seal; after every restart each acknowledged id is read back (payload and metadata), vector_count matches, live ids find themselves by search and deleted ones never return, a batch cut by the kill is whole or absent, and the index probed fully equals exact search over the recovered rows (every served row scored as its stored vector; near ties within half-precision rounding may swap).',
  'jobs: a Parquet bulk load, an upload ingestion job, a schedule run (a crawl of a local site), an index rebuild and a schema promotion start together and the kill cuts them; after the restart every job ends completed (or failed with a reason) within 90 s, every index is ready, and searches (plain and filtered on the promoted fields) equal exact search over the recovered rows.',
  'files: with the service down, a snapshot is truncated, one overwritten with garbage and one replaced by another dataset\'s valid snapshot with the same ids; an acknowledged upload is cut short on disk and another upload is cut by the kill mid-body. The snapshots are rebuilt (searches equal exact search), the uploads end failed with size_mismatch / upload_missing and nothing of them is loaded.',
  '',
];
writeFileSync(to, lines.join('\n'));
console.log(`wrote ${to}`);
