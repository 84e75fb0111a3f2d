// A `feedsync sync` killed by SIGKILL as PID 1 of its own PID namespace (what a container's run
// is: `unshare --pid --fork`, as `docker stop` past its timeout or the OOM killer leave it) leaves
// its lock files behind, naming PID 1. The next run, PID 1 of a new namespace as the next
// container's run is, cannot tell that holder from a live run of another container on the same host
// name (test/locks/holders.processes.test.ts): PIDs of another namespace say nothing. It waits until
// the lock's heartbeat has stood still for the bound (20 s, by its own clock), then takes it and
// converges: the chatbot holds the feed's listings, each once.
import { execFileSync, spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, homesConfigYaml, requests, rows, SN, total, useEmulatorSync } from './helpers/feed.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');
const FEED = 120;

/** `unshare --pid` needs root (or user namespaces); where it cannot run, the test says so and is skipped. */
function canUnshare(): boolean {
  try {
    execFileSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const sync = useEmulatorSync({ perFile: true, emulator: { chatbots: [SN] } });

/** `feedsync` as PID 1 of a new PID namespace; it dies with `unshare` (--kill-child). */
function inContainer(args: string[]) {
  return spawn('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe.runIf(canUnshare())('a run killed as PID 1 in a container', () => {
  it(
    'leaves locks naming PID 1; the next container run takes them once their heartbeat stands still, and converges with no duplicate',
    { timeout: 150_000 },
    async () => {
      const config = join(sync.env().dir, 'feedsync.yaml');
      const yaml = homesConfigYaml(
        sync.te().url,
        { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
        { deletes: '{ maxFraction: 1 }', top: ['  concurrency: 2'] },
      ).replace(
        '    source: { kind: csv, path: homes.csv }',
        '    source: { kind: csv, path: homes.csv }\n    deadlineMinutes: 2',
      );
      await writeFile(config, yaml);
      await writeFile(join(sync.env().dir, 'homes.csv'), csv(rows(FEED)));

      sync.te().emulator.configure({ latencyMs: 30 });
      const first = inContainer(['sync', '--config', config]);
      let stderr = '';
      first.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        first.on('exit', (_code, signal) => resolve(signal)),
      );
      // kill it in the middle of its writes
      while (total(await requests(sync.te(), 'RealEstateCreate')) < 10) {
        if (first.exitCode !== null) throw new Error(`the first run ended before it was killed: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      first.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      sync.te().emulator.configure({ latencyMs: 0 });
      const written = (await sync.te().listings(SN)).length;
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(FEED);
      const locks = await readdir(join(sync.env().dir, '.feedsync', 'locks'));
      // the chatbot's lock and the state file's open lock (state/open-lock.ts), left behind
      expect(
        locks
          .filter((f) => f.endsWith('.lock'))
          .map((f) => (f.endsWith('_sync.lock') ? 'chatbot' : f))
          .sort(),
      ).toEqual(['chatbot', 'state.lmdb.open.lock']);

      const second = inContainer(['sync', '--config', config, '--json']);
      let out = '';
      let err = '';
      second.stdout.on('data', (d: Buffer) => (out += d.toString()));
      second.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((resolve) => second.on('exit', (c) => resolve(c)));
      expect(code, err).toBe(0);
      expect(JSON.parse(out).reports[0]).toMatchObject({ outcome: 'ok' });

      const listings = await sync.te().listings(SN);
      const keys = listings.map((l) => (l as { MLSNumber?: string }).MLSNumber);
      expect(listings).toHaveLength(FEED);
      expect(new Set(keys).size).toBe(FEED);
      expect(existsSync(join(sync.env().dir, '.feedsync', 'locks', locks[0]!))).toBe(false); // released at the end

      // and a plain rerun (not in a container) finds nothing to do
      const rerun = await feedsync(['sync', '--config', config, '--json']);
      expect(JSON.parse(rerun.stdout).reports[0].counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    },
  );
});
