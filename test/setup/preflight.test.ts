// The preflight of the tests: without Redis a run that has a file needing it stops at once, before
// any test, in one line saying how to start it (instead of minutes of ioredis reconnect errors); a
// run of files that do not need it (named on the command line, or test:quick) runs.
import './needs-redis.js';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cliFilters, pingRedis } from './preflight.js';
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
  const vitest = (port: number, ...filters: string[]) =>
    run(
      process.execPath,
      ['node_modules/vitest/vitest.mjs', 'run', ...filters, '--config', 'test/setup/fixtures/vitest.config.ts'],
      {
        env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}`, NO_COLOR: '1', CI: '1' },
      },
    ).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('with no Redis answering, a run with a file that needs Redis stops at once in one line naming the URL and how to start one; no test runs', async () => {
    const port = await closedPort();
    const out = await vitest(port);
    expect(out.code).toBe(1);
    const text = `${out.stdout}\n${out.stderr}`;
    const lines = text.split('\n').filter((l) => l.includes('need Redis'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`feedsync: 1 test files need Redis at redis://127.0.0.1:${port} (connect ECONNREFUSED`);
    expect(lines[0]).toContain('redis-server --daemonize yes');
    expect(lines[0]).toMatch(/no test ran$/);
    expect(text).not.toMatch(/Tests\s+\d+ passed/);
  });

  it('with no Redis answering, a run of the files that do not need it runs them', async () => {
    const out = await vitest(await closedPort(), 'no-redis.check');
    expect(out.code).toBe(0);
    expect(`${out.stdout}\n${out.stderr}`).toMatch(/Tests\s+1 passed/);
  });

  it("reads the file filters of vitest's command line", () => {
    expect(cliFilters(['run'])).toEqual([]);
    expect(cliFilters(['run', 'test/docs/', '--config', 'x.ts', 'test/a.test.ts', '--reporter=dot'])).toEqual([
      'test/docs/',
      'test/a.test.ts',
    ]);
    expect(cliFilters(['test/run/', '-c', 'x.ts', '--maxWorkers', '2', '--no-file-parallelism'])).toEqual([
      'test/run/',
    ]);
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
