// A throwaway redis-server on a free port, for tests that stop Redis (never the shared one).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as { port: number };
  srv.close();
  await once(srv, 'close');
  return port;
}

export interface ThrowawayRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP: the port still accepts connections and nothing is answered, as a hung or partitioned Redis */
  pause(): void;
  /** SIGCONT after pause */
  resume(): void;
}

/**
 * `persist`: AOF with fsync always, so a restart (stop, start: same port, same folder) comes back with
 * its data, as a Redis with persistence does; without it a restart comes back empty.
 */
export async function throwawayRedis(opts: { persist?: boolean } = {}): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'feedsync-redis-'));
  let proc: ChildProcess | undefined;
  const self: ThrowawayRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    start: async () => {
      proc = spawn(
        'redis-server',
        [
          ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir],
          ...(opts.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const end = Date.now() + 10_000;
      while (!out.includes('Ready to accept connections')) {
        if (Date.now() > end || proc.exitCode !== null) throw new Error(`redis-server did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    pause: () => void proc?.kill('SIGSTOP'),
    resume: () => void proc?.kill('SIGCONT'),
    stop: async () => {
      // (killed by a signal, a process has a signalCode and no exitCode: stopped twice, the second returns)
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGKILL');
      await exited;
    },
  };
  await self.start();
  return self;
}
