// Ingestion of uploaded files over real HTTP on the local embedding model, embedded: the tests are
// test/contract/ingest-suite.ts (ingestSuite), which test/cluster/contract-three-nodes-2.test.ts
// also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';
import { INGEST_FLAGS, ingestSuite } from '../contract/ingest-suite.js';

describe('ingesting uploaded files over HTTP', () => {
  let target: EmbeddedTarget;
  beforeAll(async () => {
    target = await startEmbedded('auto', INGEST_FLAGS);
  });
  afterAll(async () => {
    await target?.close();
  });
  ingestSuite(embeddedProfile('auto'), () => target);
});
