// The preflight of the tests: without Redis a file that needs it fails at once, in one line saying
// how to start it (instead of minutes of ioredis reconnect errors); a file that does not need it runs.
import './needs-redis.js';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pingRedis } from './preflight.js';
import { REDIS_URL } from '../queue/helpers.js';

const run = promisify(execFile);

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('test preflight', () => {
  it('with no Redis answering, a file that needs Redis fails in one line naming the URL and how to start one, and a file that does not passes', async () => {
    const port = await closedPort();
    const out = await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/setup/fixtures/vitest.config.ts'], {
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}`, NO_COLOR: '1', CI: '1' },
    }).then(
      () => undefined,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(out?.code).toBe(1);
    const text = `${out!.stdout}\n${out!.stderr}`;
    const lines = text.split('\n').filter((l) => l.includes('this test file needs Redis'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toContain(`this test file needs Redis at redis://127.0.0.1:${port} (connect ECONNREFUSED`);
    expect(lines[0]).toContain('redis-server --daemonize yes');
    expect(text).toMatch(/Test Files\s+1 failed \| 1 passed/);
    expect(text).toMatch(/Tests\s+1 passed/);
  });

  it('passes when Redis answers', async () => {
    expect(await pingRedis(REDIS_URL, 2000)).toBeUndefined();
  });

  it('names a server that is not Redis', async () => {
    const server = createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      expect(await pingRedis(`redis://127.0.0.1:${port}`, 2000)).toMatch(/unexpected answer "HTTP\/1.1 400/);
    } finally {
      server.close();
    }
  });
});
