// Hybrid search and the model reranker over real HTTP, embedded: the tests are
// test/contract/retrieval-suite.ts (hybridSuite), which test/cluster/contract-three-nodes-2.test.ts
// also runs on a three-node cluster. The reranker is a local server in this process.
import { afterAll, beforeAll, describe } from 'vitest';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';
import { hybridSuite, startRetrievalUpstreams, type RetrievalUpstreams } from '../contract/retrieval-suite.js';

describe('hybrid search and the model reranker over HTTP', () => {
  let up: RetrievalUpstreams;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    up = await startRetrievalUpstreams();
    target = await startEmbedded('auto', up.flags);
  });
  afterAll(async () => {
    await target?.close();
    await up?.close();
  });
  hybridSuite(embeddedProfile('auto'), () => target, () => up);
});
