// A listing source over real HTTP: an s3 source on a local S3-compatible server (its own
// process), read into a dataset by POST /ingestion/jobs and by schedules. Incremental sync by
// ETag, changed objects replaced, removed objects' chunks deleted, the deletion guard, oversize
// objects skipped, the private-network refusal; schedules with CRUD, trigger, no overlap,
// resume_state, a DST change on an injected clock, and a restart.
// Embedded, on the test's clock: the tests are test/contract/s3-source-suite.ts, which
// test/cluster/contract-three-nodes-2.test.ts also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';
import { S3_SOURCE_FLAGS, s3SourceClock, s3SourceSuite, startS3SourcePeer, type S3SourcePeer } from '../contract/s3-source-suite.js';

describe('an s3 source and schedules over HTTP', () => {
  let peer: S3SourcePeer;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    peer = await startS3SourcePeer();
    target = await startEmbedded('auto', S3_SOURCE_FLAGS, {}, { now: () => s3SourceClock.now });
  });
  afterAll(async () => {
    await target?.close();
    await peer?.close();
  });
  s3SourceSuite(embeddedProfile('auto'), () => target, () => peer);
});
