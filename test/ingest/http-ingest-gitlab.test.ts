// The gitlab connector against a local peer speaking the GitLab REST API v4 as gitbeaker calls
// it (self-managed URL, access token, paging by Link headers): a group's projects and a named
// project, files of the default and active branches by globs, merge requests with discussions,
// direct commits; validate with samples and what the token cannot see; an incremental run that
// fetches only changed blobs and removes deleted files. Embedded: the tests are
// test/contract/connectors-suite.ts (gitlabSuite), which test/cluster/contract-three-nodes-2.test.ts
// also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { gitlabSuite, startGitLabPeer, type GitLabPeer } from '../contract/connectors-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('gitlab sources', () => {
  let peer: GitLabPeer;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    peer = await startGitLabPeer();
    target = await startEmbedded('auto', { 'allow-private-network': 'true' });
  }, 60_000);
  afterAll(async () => {
    await target?.close();
    await peer?.lab.close();
  });
  gitlabSuite(embeddedProfile('auto'), () => target, () => peer);
});
