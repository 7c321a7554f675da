// The jira connector against a local peer that speaks Jira Cloud's REST API v3 as jira.js calls
// it: issues by project keys and by JQL (paged), descriptions and comments from Atlassian
// Document Format, a rate limit waited out, validate with samples and a JQL that matches nothing,
// a wrong token named; an incremental run that re-reads only updated issues and drops deleted ones.
// Embedded: the tests are test/contract/connectors-suite.ts (jiraSuite), which
// test/cluster/contract-three-nodes-2.test.ts also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { jiraSuite, startJiraPeer, type JiraPeer } from '../contract/connectors-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('jira sources', () => {
  let jira: JiraPeer;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    jira = await startJiraPeer();
    target = await startEmbedded('auto', { 'atlassian-api-url': jira.url });
  }, 60_000);
  afterAll(async () => {
    await target?.close();
    await jira?.close();
  });
  jiraSuite(embeddedProfile('auto'), () => target, () => jira);
});
