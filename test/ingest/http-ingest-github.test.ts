// The github connector against a local peer that speaks the GitHub REST API as Octokit sends it
// (App JWT, installation token, paging by Link headers, a rate limit): files of the default and
// recently pushed branches by globs and size, pull requests with comments and review threads,
// direct commits; validate with samples and a repository the installation cannot see; an
// incremental run that changes, adds and removes files without refetching unchanged blobs.
// Embedded: the tests are test/contract/connectors-suite.ts (githubSuite), which
// test/cluster/contract-three-nodes-2.test.ts also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { githubSettings, githubSuite, startGitHubPeer, type GitHubPeer } from '../contract/connectors-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('github sources', () => {
  let peer: GitHubPeer;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    peer = await startGitHubPeer();
    const { flags, env } = githubSettings(peer);
    target = await startEmbedded('auto', flags, env);
  }, 60_000);
  afterAll(async () => {
    await target?.close();
    await peer?.gh.close();
  });
  githubSuite(embeddedProfile('auto'), () => target, () => peer);
});
