/**
 * `npm run bench:half`: narrowing rows to half precision, the step a bulk load runs on each frozen
 * partition before it joins the gathered one (and every seal of a sable partition).
 *
 * In the same run:
 *   - each kernel variant this machine has, against the serial reference (value by value, as the
 *     row store converted before the variants): floats -> halves and back over one partition's
 *     rows (50,000 x 768 by default), best of --repeat;
 *   - the whole narrowing of a sealed 50,000 x 768 cosine segment (`segmentCompactRows`: halves,
 *     then each row's inverse norm), with the kernels this machine chooses, and with the serial
 *     table (a child process with SABLE_SIMD=serial).
 * Writes bench/results/half.md.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kernelTestHooks, native } from '../../engine/native.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { Rng } from '../../testkit/rng.js';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')) as [string, string][]);
const ROWS = Number(args.rows ?? 50_000);
const DIM = Number(args.dim ?? 768);
const REPEAT = Number(args.repeat ?? 5);

function rows(n: number): Float32Array {
  const rng = new Rng(11);
  return Float32Array.from({ length: n * DIM }, () => rng.gauss() * 0.05);
}

function bestMs(run: () => unknown): number {
  let best = Infinity;
  for (let r = 0; r < REPEAT; r++) {
    const t = performance.now();
    run();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/** Narrowing a sealed segment of ROWS rows, in this process (its kernels as chosen at load). */
async function segmentNarrowingMs(): Promise<number> {
  const values = rows(ROWS);
  const ids = Float64Array.from({ length: ROWS }, (_, i) => i);
  let best = Infinity;
  for (let r = 0; r < REPEAT; r++) {
    const seg = native.segmentCreate(DIM, 'cosine', ROWS);
    native.segmentAppend(seg, ids, values);
    native.segmentSeal(seg);
    const t = performance.now();
    if (!(await native.segmentCompactRows(seg, 'sable'))) throw new Error('the segment was not narrowed');
    best = Math.min(best, performance.now() - t);
    native.segmentRelease(seg);
  }
  return best;
}

if (args.child === 'segment') {
  process.stdout.write(JSON.stringify({ ms: await segmentNarrowingMs() }));
  process.exit(0);
}

const hooks = kernelTestHooks();
const values = rows(ROWS);
const halves = hooks.kernelHalves('serial', values);
const variants = hooks.availableIsas().map((isa) => ({
  isa,
  narrowMs: bestMs(() => hooks.kernelHalves(isa, values)),
  widenMs: bestMs(() => hooks.kernelHalves(isa, halves)),
}));
const serial = variants.find((v) => v.isa === 'serial')!;
const self = fileURLToPath(import.meta.url);
const childMs = (env: Record<string, string>) =>
  (JSON.parse(execFileSync(process.execPath, [self, '--child=segment', `--rows=${ROWS}`, `--dim=${DIM}`, `--repeat=${REPEAT}`], { env: { ...process.env, ...env }, encoding: 'utf8' })) as { ms: number }).ms;
const chosen = childMs({});
const serialSegment = childMs({ SABLE_SIMD: 'serial' });

const mb = (ROWS * DIM * 4) / 2 ** 20;
const cpu = cpuInfo();
const lines = [
  '# bench:half',
  '',
  `\`npm run bench:half\` at commit ${gitCommit()}, ${new Date().toISOString()}; ${cpu.model}, ${cpu.cores} cores; ${ROWS.toLocaleString('en-US')} x ${DIM} floats (${mb.toFixed(0)} MB), best of ${REPEAT}.`,
  '',
  '| variant | floats -> halves | halves -> floats | narrowing / serial |',
  '|---|---|---|---|',
  ...variants.map((v) => `| ${v.isa} | ${v.narrowMs.toFixed(1)} ms (${(mb / (v.narrowMs / 1000) / 1024).toFixed(2)} GB/s of floats) | ${v.widenMs.toFixed(1)} ms | ${(v.narrowMs / serial.narrowMs).toFixed(3)}x |`),
  '',
  `A sealed ${ROWS.toLocaleString('en-US')} x ${DIM} cosine segment narrowed (\`segmentCompactRows\`: the halves, then each row's inverse norm from them): ${chosen.toFixed(1)} ms with the kernels this machine chooses, ${serialSegment.toFixed(1)} ms with the serial table (SABLE_SIMD=serial): ${(chosen / serialSegment).toFixed(3)}x.`,
  '',
];
const out = join(paths.root, 'bench', 'results', 'half.md');
writeFileSync(out, lines.join('\n'));
console.log(lines.join('\n'));
console.log(`wrote ${out}`);
