// Runs bin/feedsync.js as a child process, as a user would, and collects what it printed.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');

export function feedsync(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  /** `timeout`: the command is killed past it (then its code is 1, and `killed` says so), for one that may run until stopped */
  opts: { cwd?: string; timeout?: number; killSignal?: NodeJS.Signals } = {},
): Promise<{ code: number; stdout: string; stderr: string; killed?: true }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, ...opts },
      (err, stdout, stderr) => {
        const code = err ? Number((err as { code?: unknown }).code ?? 1) : 0;
        resolve({ code, stdout, stderr, ...(err?.killed && { killed: true }) });
      },
    );
  });
}

/** A config file in a fresh temporary folder pointing at `url` with the test keys; `chatbots` are YAML lines. */
export async function writeTestConfig(url: string, chatbots: string[]): Promise<{ dir: string; config: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-cli-'));
  const config = join(dir, 'feedsync.yaml');
  const api = ['api:', `  baseUrl: ${url}`, `  secretKey: ${TEST_SECRET_KEY}`, `  sessionKey: ${TEST_SESSION_KEY}`];
  await writeFile(config, [...api, 'chatbots:', ...chatbots].join('\n'));
  return { dir, config };
}
