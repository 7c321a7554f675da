// The HTTP contract's route tests (test/contract/suite.ts) against the embedded service, on each
// HTTP adapter that loads here. The same tests run on a three-node cluster in
// test/cluster/contract-three-nodes.test.ts.
import { afterAll, beforeAll, describe } from 'vitest';
import { embeddedProfile, startEmbedded } from '../contract/embedded-target.js';
import { contractSuite } from '../contract/suite.js';
import { ADAPTERS, adapterMissing } from '../support/adapters.js';

for (const adapter of ADAPTERS) {
  describe.skipIf(adapterMissing(adapter))(`HTTP service over ${adapter}`, () => {
    let target: Awaited<ReturnType<typeof startEmbedded>>;
    beforeAll(async () => {
      target = await startEmbedded(adapter, { 'max-body-bytes': String(256 * 1024) });
    });
    afterAll(async () => {
      await target?.close();
    });
    contractSuite(embeddedProfile(adapter), () => target);
  });
}
