// `node bin/feedsync.js worker` as a child process, for tests that kill one or run several.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcess {
  proc: ChildProcess;
  port: number;
  /** the push listener's port (a feed with push) */
  pushPort?: number;
  logs(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** `nodeArgs`: node's own options before the script (e.g. --inspect=0); `env`: added to this process's */
export async function spawnWorker(
  configFile: string,
  opts: { nodeArgs?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<WorkerProcess> {
  const args = [...(opts.nodeArgs ?? []), 'bin/feedsync.js', 'worker', '--config', configFile, '--port', '0'];
  const proc = spawn(process.execPath, args, {
    cwd: REPO,
    env: { ...process.env, ...opts.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  proc.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  // a worker starts in about a second; a machine under heavy load (CI neighbours) can take far longer
  const end = Date.now() + 60_000;
  let port: number | undefined;
  let pushPort: number | undefined;
  while (port === undefined) {
    const m = /"port":(\d+)[^\n]*worker ready/.exec(logs);
    if (m) {
      port = Number(m[1]);
      const p = /"pushPort":(\d+)[^\n]*worker ready/.exec(logs);
      if (p) pushPort = Number(p[1]);
    } else if (proc.exitCode !== null || Date.now() > end) throw new Error(`worker did not start:\n${logs}`);
    else await new Promise((r) => setTimeout(r, 50));
  }
  return {
    proc,
    port,
    ...(pushPort !== undefined && { pushPort }),
    logs: () => logs,
    kill: async (signal) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill(signal);
      await exited;
    },
  };
}
