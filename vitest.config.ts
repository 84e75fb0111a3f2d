import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Asks Redis once; a file that needs it and finds none fails in one line (test/setup/preflight.ts).
    globalSetup: ['test/setup/preflight.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most test time waits on processes (the CLI, workers, redis-server, a browser), not CPU. vitest's
    // default of cores - 1 ran one file at a time on a 2-core machine (486 s here); four at once took
    // 200 s with every test passing, in one sitting on the same machine.
    maxWorkers: 4,
  },
});
