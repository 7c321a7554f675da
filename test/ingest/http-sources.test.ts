// Sources over real HTTP, embedded: the tests are test/contract/ingest-suite.ts (sourcesSuite),
// which test/cluster/contract-three-nodes-2.test.ts also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';
import { sourcesSuite } from '../contract/ingest-suite.js';

describe('ingestion sources over HTTP', () => {
  let target: EmbeddedTarget;
  beforeAll(async () => {
    target = await startEmbedded('auto');
  });
  afterAll(async () => {
    await target?.close();
  });
  sourcesSuite(embeddedProfile('auto'), () => target);
});
