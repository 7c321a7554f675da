// The gdrive connector against a local peer speaking Google's token endpoint and the Drive API v3
// as @googleapis/drive calls it: a folder read recursively (paged), a file named by id, Google
// Docs and Sheets exported, `mime_types`, validate with samples and an unshared folder; an
// incremental run that reads only files whose checksum or version changed and removes deleted ones. Embedded: the tests are
// test/contract/connectors-suite.ts (gdriveSuite), which test/cluster/contract-three-nodes-2.test.ts
// also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { gdriveSuite, googleFlags, startGooglePeer, type GooglePeer } from '../contract/connectors-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('gdrive sources', () => {
  let google: GooglePeer;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    google = await startGooglePeer();
    target = await startEmbedded('auto', googleFlags(google));
  }, 60_000);
  afterAll(async () => {
    await target?.close();
    await google?.close();
  });
  gdriveSuite(embeddedProfile('auto'), () => target, () => google);
});
