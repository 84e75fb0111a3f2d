// `npm run test:quick`: the unit and in-process tests, for work in progress. Left out: every test
// file that starts processes (the CLI, worker processes, redis-server, a browser, a build), found by
// what the file uses, so a new one is left out without a list here; and, when no Redis answers at
// REDIS_URL, the files that need one (they import test/setup/needs-redis.ts), said in one line, so
// test:quick passes on a machine without Redis. `npm test` runs everything (a file that needs Redis
// and finds none fails, in one line).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';
import { NEEDS_REDIS, pingRedis, REDIS_URL } from './test/setup/preflight.js';
import { maskUrl } from './src/secrets.js';

const STARTS_PROCESSES =
  /run-cli\.js|use-deployment|worker-process|child_process|chromium\.js|redis-server|redis-topology/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

export default defineConfig(async () => {
  const files = testFiles('test').map((f) => ({ f, text: readFileSync(f, 'utf8') }));
  const noRedis = await pingRedis(REDIS_URL, 2000);
  const leftOut = files.filter(
    ({ text }) => STARTS_PROCESSES.test(text) || (noRedis !== undefined && NEEDS_REDIS.test(text)),
  );
  if (noRedis !== undefined) {
    const without = files.filter(({ text }) => !STARTS_PROCESSES.test(text) && NEEDS_REDIS.test(text)).length;
    process.stderr.write(
      `\nfeedsync test:quick: no Redis at ${maskUrl(REDIS_URL)} (${noRedis}): the ${without} test files that need it are left out\n\n`,
    );
  }
  return mergeConfig(base, defineConfig({ test: { exclude: leftOut.map(({ f }) => f) } }));
});
