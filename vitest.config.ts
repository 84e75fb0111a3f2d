import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fails fast, in one line, when Redis is not there (test/setup/preflight.ts).
    globalSetup: ['test/setup/preflight.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
