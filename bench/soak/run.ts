// `npm run bench:soak`: the service under a mixed load for 10 minutes (1 with --quick), errors
// and latency per operation over time, the RSS of the service over time and its slope. Writes
// soak.md, soak.svg and soak.json into bench/results (the record) or bench/.cache (quick and
// custom runs, so they never overwrite it).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { paths } from '../ann/paths.js';
import type { Served } from '../service.js';
import { HELP, parsePlan } from './config.js';
import { runSoak, type SoakResult } from './harness.js';
import { markdown, terminalSummary } from './report.js';
import { renderSvg } from './svg.js';

const t00 = Date.now();
function log(msg: string): void {
  process.stderr.write(`[soak ${((Date.now() - t00) / 1000).toFixed(0).padStart(4)}s] ${msg}\n`);
}

function write(result: SoakResult, dir: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(result, null, 1) + '\n');
  writeFileSync(join(dir, `${name}.svg`), renderSvg(result));
  writeFileSync(join(dir, `${name}.md`), markdown(result, `${name}.svg`));
}

async function main(): Promise<void> {
  let plan: ReturnType<typeof parsePlan>;
  try {
    plan = parsePlan(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${HELP}`);
    process.exit(2);
  }
  if (plan.kind === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (plan.kind === 'render') {
    const result = JSON.parse(readFileSync(plan.file, 'utf8')) as SoakResult;
    const stem = plan.file.replace(/\.json$/, '');
    const name = stem.slice(stem.lastIndexOf('/') + 1);
    writeFileSync(`${stem}.svg`, renderSvg(result));
    writeFileSync(`${stem}.md`, markdown(result, `${name}.svg`));
    process.stdout.write(`wrote ${stem}.md and .svg\n`);
    return;
  }
  const o = plan.options;
  let service: Served | undefined;
  const cleanup = () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (service) rmSync(service.dir, { recursive: true, force: true });
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      log(`${sig}: stopping`);
      cleanup();
      process.exit(130);
    });
  }
  // Bounded in time whatever happens: the load plus a generous allowance for setup and drain.
  const deadlineMs = o.seconds * 1000 + 20 * 60_000;
  setTimeout(() => {
    log(`giving up after ${Math.round(deadlineMs / 60_000)} min`);
    cleanup();
    process.exit(1);
  }, deadlineMs).unref();

  log(`${o.mode} mode: ${o.clients} clients, ${o.seconds} s, ${o.n} x ${o.dim}, buckets of ${o.bucketSeconds} s, mix ${JSON.stringify(o.mix)}`);
  const result = await runSoak(o, { log, onService: (s) => (service = s) });
  const [dir, name] = o.mode === 'full' && !plan.out ? [paths.results, 'soak'] : [plan.out ?? paths.cache, `soak-${o.mode}`];
  write(result, dir, name);
  process.stdout.write(`\n${terminalSummary(result)}\n`);
  process.stdout.write(`commit ${result.commit}, load ${result.loadStart[0]} -> ${result.loadEnd[0]}\n`);
  process.stdout.write(`wrote ${join(dir, name)}.md, .svg and .json\n`);
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`bench:soak failed: ${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
