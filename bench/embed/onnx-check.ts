/**
 * Checks that the ONNX Runtime peer computes the same embeddings as the native encoder: short,
 * varied sentences through both, min cosine must be >= 0.999. Batched by length (padding inside
 * batches) and padded to a fixed 64 tokens, so the attention mask and the pooling are exercised.
 *
 *   npx tsc -p . && node dist/bench/embed/onnx-check.js
 */
import { LocalEmbeddingModel } from '../../engine/embedding/local-model.js';
import { OnnxEmbedder } from './onnx-peer.js';

const SENTENCES = [
  'Hello world.',
  'The quick brown fox jumps over the lazy dog.',
  'A vector database stores embeddings and finds the nearest ones.',
  'Wie spät ist es?',
  'naïve café résumé — accents and dashes',
  '東京は日本の首都です。',
  'Rust, Go, TypeScript and C++ compile to fast code.',
  'Error: ENOENT: no such file or directory, open "/etc/config.json"',
  'I love this!!!',
  'The mitochondria is the powerhouse of the cell.',
  'SELECT id, name FROM users WHERE age > 30 ORDER BY name;',
  'Press Ctrl+C to stop the server, then run npm start again.',
  'Quarterly revenue rose 12% to $4.3 billion, beating estimates.',
  'It rained.',
  'Embeddings map sentences with similar meanings to nearby points in a high-dimensional space, so a search can rank documents by cosine similarity to the question.',
  'unbelievably antidisestablishmentarianism',
  'Le chat dort sur le canapé.',
  '🙂 emoji and symbols ∑ ∞ ≠',
  'How do I reset my password?',
  'x',
];

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

async function main(): Promise<void> {
  const local = LocalEmbeddingModel.open({ threads: 1 });
  const t0 = performance.now();
  const onnx = await OnnxEmbedder.open({ threads: 1 });
  console.log(`onnx session ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  try {
    const ref = await local.embed(SENTENCES);
    let ok = true;
    for (const [label, opts] of [
      ['batched by length (batchSize 8)', { batchSize: 8 }],
      ['padded to 64 tokens', { batchSize: 32, padTo: 64 }],
    ] as const) {
      const got = await onnx.embed(SENTENCES, opts);
      const cos = got.map((v, i) => cosine(v, ref[i]));
      const min = Math.min(...cos);
      const worst = cos.indexOf(min);
      console.log(`${label}: min cosine ${min.toFixed(6)} (1 - min = ${(1 - min).toExponential(1)}) (${JSON.stringify(SENTENCES[worst])})`);
      if (!(min >= 0.999)) ok = false;
    }
    console.log(ok ? 'OK' : 'FAIL: min cosine below 0.999');
    if (!ok) process.exitCode = 1;
  } finally {
    local.close();
    await onnx.close();
  }
}

await main();
