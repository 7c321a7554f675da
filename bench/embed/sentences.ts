/**
 * Real documentation sentences for the embedding benchmark: the SAP Fiori tools documentation
 * chunks that the devDependency @sap-ux/fiori-docs-embeddings ships, split into sentences, kept
 * when 8 to 48 words long (the shape of the figure the embedding issue started from), in a
 * seeded shuffle so every run and peer sees the same ones.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../testkit/rng.js';
import { paths } from '../ann/paths.js';

export const SENTENCE_SOURCE = '@sap-ux/fiori-docs-embeddings (data/embeddings/records.jsonl)';

export function loadSentences(): string[] {
  const file = join(paths.root, 'node_modules', '@sap-ux', 'fiori-docs-embeddings', 'data', 'embeddings', 'records.jsonl');
  const out: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { content } = JSON.parse(line) as { content: string };
    for (const raw of content.split(/(?<=[.!?])\s+/)) {
      const s = raw.replace(/\s+/g, ' ').trim();
      const words = s.split(' ').length;
      if (words >= 8 && words <= 48) out.push(s);
    }
  }
  const rng = new Rng(42);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
