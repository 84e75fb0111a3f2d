// The preflight of `npm test`: without Redis the suite stops at once with one line saying how to
// start it, instead of minutes of ioredis reconnect errors.
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
  it('fails in one line naming the URL and how to start Redis when nothing answers', async () => {
    const port = await closedPort();
    const script = "import('./test/setup/preflight.ts').then((m) => m.default())";
    const err = await run(process.execPath, ['--import', 'tsx', '-e', script], {
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}` },
    }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(1);
    const lines = err!.stderr.split('\n').filter((l) => l.trim());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`feedsync tests need Redis at redis://127.0.0.1:${port}`);
    expect(lines[0]).toContain('redis-server --daemonize yes');
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
