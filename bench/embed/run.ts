// `npm run bench:embed`: throughput of the local embedding model (all-MiniLM-L6-v2 on the native
// core) on real documentation sentences, and the latency of one short query, against the same
// weights in onnxruntime-node (onnx-peer.ts) measured in the same run: length-bucketed batches,
// and every sequence padded to 128 tokens (the naive set-up). Writes bench/results/embed.md/.json.
//
//   --quick        2000 sentences (default 8000)     --sentences=N
//   --threads=N    threads for both (default 2)      --no-peer   skip onnxruntime
//   --out=DIR
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { LocalEmbeddingModel } from '../../engine/embedding/local-model.js';
import { native } from '../../engine/native.js';
import { cpuInfo, gitCommit, oneLine } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { OnnxEmbedder } from './onnx-peer.js';
import { OnnxRuntimeUnavailable, ORT_VERSION } from './onnx-runtime.js';
import { loadSentences, SENTENCE_SOURCE } from './sentences.js';

interface Embedder {
  embed(texts: string[]): Promise<Float32Array[]>;
}

interface Throughput {
  name: string;
  seconds: number;
  sentencesPerSecond: number;
  tokensPerSecond: number;
}

interface Latency {
  name: string;
  p50: number;
  p99: number;
  mean: number;
}

const args = new Map(process.argv.slice(2).map((a) => (a.includes('=') ? [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a.slice(2), 'true'])));
const log = (m: string) => process.stderr.write(`[embed] ${m}\n`);

async function throughput(name: string, e: Embedder, texts: string[], tokens: number): Promise<Throughput> {
  await e.embed(texts.slice(0, 64)); // warm-up
  let best = Infinity;
  for (let rep = 0; rep < 2; rep++) {
    const t0 = performance.now();
    for (let i = 0; i < texts.length; i += 512) await e.embed(texts.slice(i, i + 512));
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  const r = { name, seconds: best, sentencesPerSecond: texts.length / best, tokensPerSecond: tokens / best };
  log(`${name}: ${r.sentencesPerSecond.toFixed(0)} sentences/s, ${r.tokensPerSecond.toFixed(0)} tokens/s`);
  return r;
}

async function latency(name: string, e: Embedder, queries: string[]): Promise<Latency> {
  for (const q of queries.slice(0, 20)) await e.embed([q]);
  const ms: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await e.embed([q]);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const r = { name, p50: ms[Math.floor(ms.length / 2)], p99: ms[Math.floor(ms.length * 0.99)], mean: ms.reduce((a, b) => a + b, 0) / ms.length };
  log(`${name}: one short query p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`);
  return r;
}

async function main(): Promise<void> {
  const threads = Number(args.get('threads') ?? Math.min(2, availableParallelism()));
  const count = Number(args.get('sentences') ?? (args.has('quick') ? 2000 : 8000));
  const all = loadSentences();
  const texts = all.slice(0, count);
  // Short queries: the first words of other sentences (4 to 9 words).
  const queries = all.slice(count, count + 200).map((s, i) => s.split(' ').slice(0, 4 + (i % 6)).join(' '));
  const load0 = loadavg()[0];

  const sable = LocalEmbeddingModel.open({ threads });
  const single = LocalEmbeddingModel.open({ threads: 1 });
  const precision = sable.precision;
  const tokens = texts.reduce((n, t) => n + sable.countTokens(t) + 2, 0);
  log(`${texts.length} sentences, ${tokens} tokens (${(tokens / texts.length).toFixed(1)} per sentence), ${threads} threads, ISA ${native.activeIsa()}`);

  const rows: Throughput[] = [];
  const lat: Latency[] = [];
  rows.push(await throughput(`sable, ${threads} threads`, sable, texts, tokens));
  lat.push(await latency('sable, 1 thread', single, queries));
  let peerNote = 'onnxruntime peer skipped (--no-peer)';
  if (!args.has('no-peer')) {
    try {
      const peer = await OnnxEmbedder.open({ threads });
      const peerOne = await OnnxEmbedder.open({ threads: 1 });
      rows.push(await throughput(`onnxruntime, ${threads} threads, length-bucketed batches of 32`, { embed: (t) => peer.embed(t, { batchSize: 32 }) }, texts, tokens));
      rows.push(await throughput(`onnxruntime, ${threads} threads, batches of 32 padded to 128 tokens`, { embed: (t) => peer.embed(t, { batchSize: 32, padTo: 128 }) }, texts, tokens));
      lat.push(await latency('onnxruntime, 1 thread', { embed: (t) => peerOne.embed(t) }, queries));
      // sable again: the machine is shared, so the first and last sable runs bracket the peer's.
      rows.push(await throughput(`sable, ${threads} threads (again)`, sable, texts, tokens));
      await peer.close();
      await peerOne.close();
      peerNote = `onnxruntime-node ${ORT_VERSION} on Node ${process.versions.node} (fetched into bench/.cache on first use) on an ONNX graph written from the same safetensors (bench/embed/onnx-graph.ts; ORT's default graph optimisations)`;
    } catch (e) {
      // Never the whole bench for a missing peer: one line, printed and in embed.md / embed.json.
      peerNote = e instanceof OnnxRuntimeUnavailable ? e.message : `onnxruntime skipped: ${oneLine((e as Error).message)}`;
      log(peerNote);
    }
  }
  sable.close();
  single.close();

  const sableBest = Math.max(...rows.filter((r) => r.name.startsWith('sable')).map((r) => r.tokensPerSecond));
  const md = [
    '# Embedding throughput (local all-MiniLM-L6-v2)',
    '',
    `Generated by \`npm run bench:embed\` on ${new Date().toISOString()}; commit \`${gitCommit()}\`; ${cpuInfo().model}, ${availableParallelism()} cores; kernels ${native.activeIsa()}, model in ${precision}; load average ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)}.`,
    '',
    `- sentences: ${texts.length} real documentation sentences of 8-48 words from ${SENTENCE_SOURCE}, ${tokens} tokens with [CLS]/[SEP] (${(tokens / texts.length).toFixed(1)} per sentence); batches of 512 texts per call, best of two passes`,
    `- peer: ${peerNote}`,
    `- short queries: ${queries.length} texts of 4-9 words, one per call, one thread`,
    '',
    '| run | sentences/s | tokens/s | sable ÷ run |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.name} | ${r.sentencesPerSecond.toFixed(0)} | ${r.tokensPerSecond.toFixed(0)} | ${(sableBest / r.tokensPerSecond).toFixed(2)}x |`),
    '',
    '| one short query | p50 ms | p99 ms | mean ms |',
    '| --- | ---: | ---: | ---: |',
    ...lat.map((l) => `| ${l.name} | ${l.p50.toFixed(2)} | ${l.p99.toFixed(2)} | ${l.mean.toFixed(2)} |`),
    '',
  ].join('\n');
  process.stdout.write(md);
  const out = args.get('out') ?? join(paths.root, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'embed.md'), md);
  writeFileSync(join(out, 'embed.json'), JSON.stringify({ date: new Date().toISOString(), commit: gitCommit(), threads, sentences: texts.length, tokens, rows, latency: lat, peer: peerNote }, null, 2) + '\n');
}

main().catch((e) => {
  process.stderr.write(`[embed] ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
