// vitest globalSetup: the suite needs Redis (queues, run history, state). Without it every Redis
// test would sit through ioredis reconnects until its timeout; say so once, in one line, and stop.
// Without a Chromium the browser tests are skipped: say that once too, with how to run them.
import { Socket } from 'node:net';
import { browserPlan } from '../browser/find-chromium.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const HOW = 'start one with `redis-server --daemonize yes` or `docker run -d -p 6379:6379 redis:7-alpine`, or set REDIS_URL';

export default async function preflight(): Promise<void> {
  const problem = await pingRedis(REDIS_URL, 2000);
  if (problem === undefined) {
    const { skipped } = browserPlan();
    if (skipped) process.stderr.write(`\nfeedsync: ${skipped}\n\n`);
    return;
  }
  process.stderr.write(`\nfeedsync tests need Redis at ${redactUrl(REDIS_URL)} (${problem}): ${HOW}.\n\n`);
  process.exit(1);
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

function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}
