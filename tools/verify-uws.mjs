#!/usr/bin/env node
// Build step: the uWS binaries Sable may load from uws-pack (a repack by one maintainer) must be
// the files checked here; the hashes live in control-plane/http/uws-binary.ts, which also checks
// them before it loads one. A different file fails the install instead of running in-process.
import { verifyPinnedUws } from '../dist/control-plane/http/uws-binary.js';

const { ok, bad } = verifyPinnedUws();
for (const line of ok) console.log(`verify-uws: ${line}`);
if (bad.length > 0) {
  for (const line of bad) console.error(`verify-uws: ${line}`);
  process.exit(1);
}
