// The web connector against a local site on 127.0.0.1 (the service opts in with
// allow-private-network; without it the crawl is refused, naming the setting): robots.txt,
// depth, noindex and nofollow, canonical URLs, redirects, linked PDFs, out-of-domain links,
// selectors, custom headers; validate with samples and warnings; an incremental second run that
// adds, changes and removes pages without re-embedding the unchanged ones. Embedded: the tests are
// test/contract/connectors-suite.ts (webSuite), which test/cluster/contract-three-nodes-2.test.ts
// also runs on a three-node cluster.
import { afterAll, beforeAll, describe } from 'vitest';
import { startWebSite, webSuite, type WebSite } from '../contract/connectors-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('web sources', () => {
  let site: WebSite;
  let target: EmbeddedTarget;
  beforeAll(async () => {
    site = await startWebSite();
    target = await startEmbedded('auto', { 'allow-private-network': 'true', 'web-politeness-ms': '0' });
  }, 60_000);
  afterAll(async () => {
    await target?.close();
    await site?.close();
  });
  webSuite(embeddedProfile('auto'), () => target, () => site);
});
