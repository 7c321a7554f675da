// The gcs connector against a local peer speaking Google's token endpoint and the Cloud Storage
// JSON API as @google-cloud/storage calls it: a service-account key exchanged for a token (RFC
// 7523), objects by prefix and patterns (paged), validate with samples and an empty prefix, a
// wrong key named; an incremental run that reads only changed objects (md5Hash) and removes
// deleted ones. Embedded: the tests are
// test/contract/connectors-suite.ts (gcsSuite), which test/cluster/contract-three-nodes-2.test.ts
// also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { gcsSuite, googleFlags, startGooglePeer, type GooglePeer } from '../contract/connectors-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('gcs sources', () => {
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
  gcsSuite(embeddedProfile('auto'), () => target, () => google);
});
