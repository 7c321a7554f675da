// F12, contract parity: the HTTP contract's suites (test/contract/), the ones test/http/http.test.ts,
// test/answer/http-answer.test.ts and test/bulk/http-bulk.test.ts run embedded, against three `sable serve` nodes on one
// PostgreSQL and one local S3 server, every call going to the next node in turn.
import { afterAll, beforeAll, describe } from 'vitest';
import { answerSuite } from '../contract/answer-suite.js';
import { bulkSuite } from '../contract/bulk-suite.js';
import { clusterProfile, startClusterTarget } from '../contract/cluster-target.js';
import { contractSuite } from '../contract/suite.js';

let target: Awaited<ReturnType<typeof startClusterTarget>>;
beforeAll(async () => {
  target = await startClusterTarget({
    nodes: 3,
    // What the embedded suites are started with: the route suite's body limit (its 413 test),
    // the answer suite's detach grace (its leaving client).
    env: { SABLE_MAX_BODY_BYTES: String(256 * 1024), SABLE_ANSWER_DETACH_GRACE_MS: '200' },
  });
}, 90_000);
afterAll(async () => {
  await target?.close();
});

describe('the HTTP contract on a three-node cluster', () => {
  contractSuite(clusterProfile, () => target);
});

describe('answering questions on a three-node cluster (extractive)', () => {
  answerSuite(clusterProfile, () => target);
});

describe('bulk Parquet uploads and jobs on a three-node cluster', () => {
  bulkSuite(clusterProfile, () => target);
});
