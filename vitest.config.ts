import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { browserPlan } from './test/browser/find-chromium.js';

/** The browser tests (the files that drive Chromium through test/browser/chromium.ts). */
const browserTests = () =>
  readdirSync('test/browser')
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join('test/browser', f))
    .filter((f) => /from '\.\/chromium\.js'/.test(readFileSync(f, 'utf8')));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Without a Chromium (and none required: FEEDSYNC_REQUIRE_BROWSER, CHROMIUM_PATH) the browser
    // tests are left out, said in one line by the preflight; a new one is left out without a list here.
    exclude: [...configDefaults.exclude, ...(browserPlan().run ? [] : browserTests())],
    // Asks Redis once; without it a run of files that need it stops at once, in one line (test/setup/preflight.ts).
    globalSetup: ['test/setup/preflight.ts'],
    // Hang guards, not measures: a test that takes 3 s on a quiet machine took over 30 s with the
    // machine's load at 20 on 2 cores (property tests, CLI processes, a build).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Most test time waits on processes (the CLI, workers, redis-server, a browser), not CPU. vitest's
    // default of cores - 1 ran one file at a time on a 2-core machine (486 s here); four at once took
    // 200 s with every test passing, in one sitting on the same machine.
    maxWorkers: 4,
  },
});
