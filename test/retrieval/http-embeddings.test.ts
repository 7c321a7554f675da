// Embeddings over real HTTP (the local model, external providers, secrets), embedded: the tests are
// test/contract/retrieval-suite.ts (embeddingsSuite), which test/cluster/contract-three-nodes-2.test.ts
// also runs on a three-node cluster. The OpenAI / Cohere servers are a local server in this process.
import { afterAll, beforeAll, describe } from 'vitest';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';
import { embeddingsSuite, startRetrievalUpstreams, type RetrievalUpstreams } from '../contract/retrieval-suite.js';

describe('embeddings over HTTP: the local model, external providers, secrets', () => {
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
  embeddingsSuite(embeddedProfile('auto'), () => target, () => up);
});
