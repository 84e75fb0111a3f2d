// `npm run test:quick`: the unit and in-process tests, for work in progress (under a minute on two
// cores). Left out: every test file that starts processes (the CLI, worker processes, redis-server,
// a browser, a build), found by what the file uses, so a new one is left out without a list here.
// `npm test` runs everything.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

const STARTS_PROCESSES = /run-cli\.js|use-deployment|worker-process|child_process|chromium\.js|redis-server|redis-topology/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []));
}

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: testFiles('test').filter((f) => STARTS_PROCESSES.test(readFileSync(f, 'utf8'))),
    },
  }),
);
