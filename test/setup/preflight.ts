// vitest globalSetup: asks Redis once whether it answers and hands the answer to the test files
// (vitest's provide/inject); only a file that uses Redis acts on it, by importing needs-redis.ts,
// which fails that file in one line saying how to start Redis, instead of minutes of ioredis
// reconnects. Files that never touch Redis run without one. Without a Chromium the browser tests
// are skipped: said here once, with how to run them.
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
const HOW = 'start one with `redis-server --daemonize yes` or `docker run -d -p 6379:6379 redis:7-alpine`, or set REDIS_URL';

export default async function preflight(project: TestProject): Promise<void> {
  const problem = await pingRedis(REDIS_URL, 2000);
  project.provide('redisProblem', problem === undefined ? '' : redisNeeded(REDIS_URL, problem));
  const { skipped } = browserPlan();
  if (skipped) process.stderr.write(`\nfeedsync: ${skipped}\n\n`);
}

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
      done(answer.startsWith('+PONG') || answer.startsWith('-NOAUTH') ? undefined : `unexpected answer ${JSON.stringify(answer.trim())}`);
    });
    socket.connect(port, host, () => socket.write('PING\r\n'));
  });
}
