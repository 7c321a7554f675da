// F12, contract parity, continued: the contract suites that need service settings of their own,
// run against three `sable serve` nodes on one PostgreSQL and one local S3 server, every call going
// to the next node in turn: test/contract/retrieval-suite.ts (upstream reranker and embeddings
// servers, short timeouts), ingest-suite.ts (a small largest-file bound) and connectors-suite.ts
// (the peers' URLs, private addresses allowed, the GitHub App's key; one Atlassian gateway URL in
// front of the Jira and Confluence peers, test/support/path-router.ts) and s3-source-suite.ts (its
// scheduler tests, on the test's clock, are embedded only: no fast tick here), which
// test/retrieval/http-{hybrid,embeddings}.test.ts and
// test/ingest/http-{sources,ingest,ingest-jira,ingest-gitlab,ingest-web,ingest-gcs,ingest-gdrive,ingest-github,ingest-confluence,ingest-s3}.test.ts
// run embedded. One cluster for them all (each costs seconds to start), its nodes started with
// every suite's settings, which do not meet: each suite works in organizations of its own, and
// allowing private addresses only makes the sources suite's web validate on 127.0.0.1:9 fail by a
// refused connection rather than by the policy (it asserts the failure either way).
import { afterAll, beforeAll, describe } from 'vitest';
import { clusterOwnProfile, clusterProfile, envOf, startClusterTarget } from '../contract/cluster-target.js';
import { startPathRouter } from '../support/path-router.js';
import {
  confluenceSuite, gcsSuite, gdriveSuite, githubSettings, githubSuite, gitlabSuite, googleFlags, jiraSuite, startGitHubPeer, startGitLabPeer, startGooglePeer,
  startConfluencePeer, startJiraPeer, startWebSite, webSuite, type ConfluencePeer, type GitHubPeer, type GitLabPeer, type GooglePeer, type JiraPeer, type WebSite,
} from '../contract/connectors-suite.js';
import { INGEST_FLAGS, ingestSuite, sourcesSuite } from '../contract/ingest-suite.js';
import { s3SourceSuite, startS3SourcePeer, type S3SourcePeer } from '../contract/s3-source-suite.js';
import { embeddingsSuite, hybridSuite, startRetrievalUpstreams, type RetrievalUpstreams } from '../contract/retrieval-suite.js';

let up: RetrievalUpstreams;
let jira: JiraPeer;
let gitlab: GitLabPeer;
let site: WebSite;
let google: GooglePeer;
let github: GitHubPeer;
let wiki: ConfluencePeer;
let bucket: S3SourcePeer;
let atlassian: Awaited<ReturnType<typeof startPathRouter>>;
let target: Awaited<ReturnType<typeof startClusterTarget>>;
beforeAll(async () => {
  [up, jira, gitlab, site, google, github, wiki, bucket] = await Promise.all([
    startRetrievalUpstreams(), startJiraPeer(), startGitLabPeer(), startWebSite(), startGooglePeer(), startGitHubPeer(), startConfluencePeer(), startS3SourcePeer(),
  ]);
  // atlassian-api-url is one URL for both Atlassian APIs: Confluence's gateway paths to its peer, the rest to Jira's.
  atlassian = await startPathRouter([['/ex/confluence/', wiki.url]], jira.url);
  const gh = githubSettings(github);
  target = await startClusterTarget({
    nodes: 3,
    env: {
      ...envOf({ ...up.flags, ...INGEST_FLAGS, 'atlassian-api-url': atlassian.url, 'allow-private-network': 'true', 'web-politeness-ms': '0', ...googleFlags(google), ...gh.flags }),
      ...gh.env,
    },
  });
}, 90_000);
afterAll(async () => {
  await target?.close();
  await up?.close();
  await jira?.close();
  await gitlab?.lab.close();
  await site?.close();
  await google?.close();
  await github?.gh.close();
  await atlassian?.close();
  await wiki?.close();
  await bucket?.close();
});

describe('hybrid search and the model reranker on a three-node cluster', () => {
  hybridSuite(clusterProfile, () => target, () => up);
});

describe('embeddings on a three-node cluster: the local model, external providers, secrets', () => {
  // Its managed-model test starts a cluster of its own, with a managed inference server configured.
  embeddingsSuite(clusterOwnProfile, () => target, () => up);
});

describe('ingestion sources on a three-node cluster', () => {
  sourcesSuite(clusterProfile, () => target);
});

describe('ingesting uploaded files on a three-node cluster', () => {
  ingestSuite(clusterProfile, () => target);
});

describe('jira sources on a three-node cluster', () => {
  jiraSuite(clusterProfile, () => target, () => jira);
});

describe('gitlab sources on a three-node cluster', () => {
  gitlabSuite(clusterProfile, () => target, () => gitlab);
});

describe('web sources on a three-node cluster', () => {
  // Its private-address test starts a cluster of its own that does not allow them.
  webSuite(clusterOwnProfile, () => target, () => site);
});

describe('gcs sources on a three-node cluster', () => {
  gcsSuite(clusterProfile, () => target, () => google);
});

describe('gdrive sources on a three-node cluster', () => {
  gdriveSuite(clusterProfile, () => target, () => google);
});

describe('github sources on a three-node cluster', () => {
  githubSuite(clusterProfile, () => target, () => github);
});

describe('confluence sources on a three-node cluster', () => {
  confluenceSuite(clusterProfile, () => target, () => wiki);
});

describe('an s3 source on a three-node cluster', () => {
  // The tests on the test's clock (schedules) are the embedded service's; the private-address
  // refusal is the web suite's on this cluster.
  s3SourceSuite(clusterProfile, () => target, () => bucket);
});
