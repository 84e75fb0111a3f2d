// vitest globalSetup: asks Redis once whether it answers. Where it does not and a test file of the
// run needs it (it imports needs-redis.ts), the run stops here, before any test, in one line saying
// how to start Redis (`npm test` on a machine without one; test:quick leaves those files out). The
// answer is also handed to the test files (vitest's provide/inject): needs-redis.ts fails a file in
// one line, should one run anyway. Without a Chromium the browser tests are left out
// (vitest.config.ts): said here once, with how to run them.
import { readFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import type { TestProject } from 'vitest/node';
import { browserPlan } from '../browser/find-chromium.js';
import { maskUrl } from '../../src/secrets.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** '' when the test Redis answers, else the one line a file that needs Redis fails with */
    redisProblem: string;
  }
}

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const HOW =
  'start one with `redis-server --daemonize yes` or `docker run -d -p 6379:6379 redis:7-alpine`, or set REDIS_URL';

export default async function preflight(project: TestProject): Promise<void> {
  const problem = await pingRedis(REDIS_URL, 2000);
  project.provide('redisProblem', problem === undefined ? '' : redisNeeded(REDIS_URL, problem));
  if (problem !== undefined) {
    const needing = await filesNeedingRedis(project);
    if (needing > 0) {
      process.stderr.write(
        `\nfeedsync: ${needing} test files need Redis at ${maskUrl(REDIS_URL)} (${problem}): ${HOW}; no test ran\n\n`,
      );
      process.exit(1);
    }
  }
  const { skipped } = browserPlan();
  if (skipped) process.stderr.write(`\nfeedsync: ${skipped}\n\n`);
}

/** How many of the run's test files (the config's include and exclude, the command line's filters) need Redis. */
async function filesNeedingRedis(project: TestProject): Promise<number> {
  const { testFiles } = await project.globTestFiles(cliFilters(process.argv.slice(2)));
  const texts = await Promise.all(testFiles.map((f) => readFile(f, 'utf8')));
  return texts.filter((text) => NEEDS_REDIS.test(text)).length;
}

/** What a test file that needs Redis imports first. */
export const NEEDS_REDIS = /^import '(?:\.\.?\/)+(?:setup\/)?needs-redis\.js';$/m;

/** The one line a test file that needs Redis fails with when Redis does not answer. */
export function redisNeeded(url: string, problem: string): string {
  return `this test file needs Redis at ${maskUrl(url)} (${problem}): ${HOW}`;
}

/** undefined when Redis answers PING within `ms`, else what went wrong. */
export function pingRedis(url: string, ms: number): Promise<string | undefined> {
  const u = new URL(url);
  const host = u.hostname || '127.0.0.1';
  const port = Number(u.port || 6379);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (result: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(`no answer within ${ms} ms`), ms);
    let answer = '';
    socket.on('error', (err) => done(err.message));
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
      if (!answer.includes('\r\n')) return;
      // +PONG, or -NOAUTH when a password is needed (then Redis is there: the tests will say more).
      done(
        answer.startsWith('+PONG') || answer.startsWith('-NOAUTH')
          ? undefined
          : `unexpected answer ${JSON.stringify(answer.trim())}`,
      );
    });
    socket.connect(port, host, () => socket.write('PING\r\n'));
  });
}

/** Options of `vitest` that take the next word as their value (the rest are flags or `--x=value`). */
const WITH_VALUE = new Set([
  '-c',
  '--config',
  '-r',
  '--root',
  '--dir',
  '--reporter',
  '--project',
  '--outputFile',
  '-t',
  '--testNamePattern',
  '--maxWorkers',
  '--pool',
  '--environment',
  '--shard',
  '--exclude',
  '--mode',
]);

/** The file filters of a `vitest [run] [filters...] [options]` command line. */
export function cliFilters(args: readonly string[]): string[] {
  const filters: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (WITH_VALUE.has(arg)) i++;
    else if (!arg.startsWith('-') && !(filters.length === 0 && ['run', 'watch', 'dev', 'related'].includes(arg)))
      filters.push(arg);
  }
  return filters;
}
