// The confluence connector against a local peer speaking the Confluence REST API v2, at a site
// (base_url, basic auth) and through the Atlassian gateway (cloud_id, OAuth token): pages of the
// chosen spaces (cursor pages), storage-format bodies as HTML, attachments, validate with samples
// and a space the credentials do not see; an incremental run that re-reads only pages whose
// version changed and removes deleted ones.
// Embedded: the tests are test/contract/connectors-suite.ts (confluenceSuite), which
// test/cluster/contract-three-nodes-2.test.ts also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { confluenceSuite, startConfluencePeer, type ConfluencePeer } from '../contract/connectors-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('confluence sources', () => {
  let wiki: ConfluencePeer;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    wiki = await startConfluencePeer();
    target = await startEmbedded('auto', { 'atlassian-api-url': wiki.url, 'allow-private-network': 'true' });
  }, 60_000);
  afterAll(async () => {
    await target?.close();
    await wiki?.close();
  });
  confluenceSuite(embeddedProfile('auto'), () => target, () => wiki);
});
