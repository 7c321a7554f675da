// Question answering over real HTTP without a model (the extractive answerer), embedded: the tests
// are test/contract/answer-suite.ts, which test/cluster/contract-three-nodes.test.ts also runs on
// a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { answerSuite } from '../contract/answer-suite.js';
import { embeddedProfile, startEmbedded } from '../contract/embedded-target.js';

describe('answering questions over HTTP (extractive)', () => {
  let target: Awaited<ReturnType<typeof startEmbedded>>;
  beforeAll(async () => {
    target = await startEmbedded('auto', { 'answer-detach-grace-ms': '200' });
  });
  afterAll(async () => {
    await target?.close();
  });
  answerSuite(embeddedProfile('auto'), () => target);
});
