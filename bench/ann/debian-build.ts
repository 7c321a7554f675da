// Builds the debian-minilm set without running the benchmark (`npm run build:ts` first):
//
//   node dist/bench/ann/debian-build.js                        the whole set (1000 + 120,000)
//   node dist/bench/ann/debian-build.js --count                sentences per package, no embedding
//   node dist/bench/ann/debian-build.js --limit-sentences=3000 a sample (development)
//
// Interrupted, it resumes where it stopped. It ends by checking that every cached vector has
// unit norm (the embedder checks each one as it writes it; this reads back what is on disk).
import { join } from 'node:path';
import { loadSet } from './datasets.js';
import { prepareDebianMiniLm, sentenceList } from './debian-minilm.js';

const args = new Map(process.argv.slice(2).map((a) => (a.includes('=') ? [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a.slice(2), 'true'])));

function normRange(v: Float32Array, dim: number): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let off = 0; off < v.length; off += dim) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += v[off + d]! * v[off + d]!;
    lo = Math.min(lo, Math.sqrt(s));
    hi = Math.max(hi, Math.sqrt(s));
  }
  return [lo, hi];
}

async function main(): Promise<void> {
  if (args.has('count')) {
    const { list } = await sentenceList();
    const rows = list.packages.map((p) => `| ${p.name} | ${p.version} | ${p.files} | ${p.prose} | ${p.distinct} | ${p.chosen} |`);
    process.stdout.write(
      ['| package | version | files | prose sentences | new distinct | chosen |', '| --- | --- | ---: | ---: | ---: | ---: |', ...rows].join('\n') +
        `\n\n${list.distinct} distinct sentences of ${list.words.join('-')} words; the set takes ${list.queries} queries + ${list.base} indexed\n`,
    );
    return;
  }
  const limit = args.has('limit-sentences') ? Number(args.get('limit-sentences')) : null;
  if (limit !== null && (!Number.isInteger(limit) || limit < 2000)) throw new Error('--limit-sentences must be an integer >= 2000');
  const meta = await prepareDebianMiniLm(1000, limit);
  const set = loadSet('debian-minilm', meta.count, meta.nq);
  const [bLo, bHi] = normRange(set.base, meta.dim);
  const [qLo, qHi] = normRange(set.queries, meta.dim);
  const worst = Math.max(Math.abs(1 - Math.min(bLo, qLo)), Math.abs(Math.max(bHi, qHi) - 1));
  process.stdout.write(
    `${join('bench', '.cache', 'data', 'debian-minilm')}: ${meta.count} indexed + ${meta.nq} queries x ${meta.dim}${meta.sample ? ` (SAMPLE of ${meta.sample} sentences)` : ''}\n` +
      `norms: base ${bLo.toFixed(6)}..${bHi.toFixed(6)}, queries ${qLo.toFixed(6)}..${qHi.toFixed(6)}\n`,
  );
  if (worst > 1e-3) throw new Error(`vectors are not unit norm (off by ${worst})`);
}

main().catch((e: unknown) => {
  process.stderr.write(`debian-build failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
