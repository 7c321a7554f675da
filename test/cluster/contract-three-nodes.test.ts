// F12, contract parity: the HTTP contract's route tests (test/contract/suite.ts), the ones
// test/http/http.test.ts runs embedded, against three `sable serve` nodes on one PostgreSQL and
// one local S3 server, every call going to the next node in turn.
import { afterAll, beforeAll, describe } from 'vitest';
import { clusterProfile, startClusterTarget } from '../contract/cluster-target.js';
import { contractSuite } from '../contract/suite.js';

describe('the HTTP contract on a three-node cluster', () => {
  let target: Awaited<ReturnType<typeof startClusterTarget>>;
  beforeAll(async () => {
    // The body limit the embedded suite runs with (its 413 test).
    target = await startClusterTarget({ nodes: 3, env: { SABLE_MAX_BODY_BYTES: String(256 * 1024) } });
  }, 90_000);
  afterAll(async () => {
    await target?.close();
  });
  contractSuite(clusterProfile, () => target);
});
