import { defineConfig } from 'vitest/config';

// The cluster's fault tests (`npm run test:faults`, a CI step of its own): processes killed,
// paused and restarted, with bounded loops and hard timeouts.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
