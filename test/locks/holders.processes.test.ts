// Two `feedsync sync` processes on one host name, one chatbot, the second started while the first
// holds the chatbot's lock: the second must wait, whatever it can or cannot tell about the first.
// Each case is a deployment where the holder looks gone to a rule that compares too much:
// - both runs PID 1, each of its own PID namespace (`docker run --network host`, Kubernetes
//   hostNetwork): `unshare --pid --fork --mount-proc`; the file lock of a shared state folder;
// - the second under another boot id (a compose file's `hostname:` on two VMs): a mount namespace
//   with another file bound over /proc/sys/kernel/random/boot_id; the Redis lock;
// - the second with its wall clock 30 s ahead (test/helpers/clock-ahead.mjs), on the shared file lock.
// Each ends with every key on the emulator exactly once (with the holder rules of before, the second
// run freed the live lock and created the listings a second time). Needs root and util-linux's
// unshare for the first two (skipped, and said, without them).
import '../setup/needs-redis.js';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatbotLockName, targetLockKey } from '../../src/locks/target-lock.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { REDIS_URL } from '../queue/helpers.js';
import { writeHomesDeployment } from './helpers.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');
const CLOCK_AHEAD = join(import.meta.dirname, '../helpers/clock-ahead.mjs');
const SN = 'SN-LOCK-HOLDER';
const KEYS = 300;

const root = process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
if (!root)
  console.warn(
    'feedsync: lock holder tests in PID and mount namespaces skipped: they need root and unshare (util-linux)',
  );

let te: TestEmulator;
let dir: string;
beforeAll(async () => {
  // slow enough writes that the second run starts while the first holds the lock
  te = await startTestEmulator({ latencyMs: 25 });
});
afterAll(() => te.close());

async function setUp(redisPrefix?: string): Promise<string> {
  await te.reset();
  dir = await mkdtemp(join(tmpdir(), 'feedsync-holders-'));
  return writeHomesDeployment(dir, te, { chatbot: SN, keys: KEYS, ...(redisPrefix && { redisPrefix }) });
}

interface Run {
  done: Promise<{ code: number | null; out: string }>;
}

function run(wrap: string[], config: string, env: NodeJS.ProcessEnv = {}): Run {
  const [cmd, ...args] = [
    ...wrap,
    process.execPath,
    ...(env.FEEDSYNC_TEST_CLOCK_AHEAD_MS ? ['--import', CLOCK_AHEAD] : []),
    BIN,
    'sync',
    '--config',
    config,
  ];
  const child = spawn(cmd!, args, {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  return { done: new Promise((resolve) => child.on('close', (code) => resolve({ code, out }))) };
}

async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const lockFileHeld = async () =>
  (await readdir(join(dir, '.feedsync', 'locks')).catch(() => [])).some((f) => f.endsWith('_sync.lock'));

/** Run `first`, start `second` once the first holds the lock; both must succeed; every key once. */
async function contend(first: () => Run, second: () => Run, held: () => Promise<boolean>): Promise<void> {
  const a = first();
  await until('the first run holds the lock', held);
  const b = second();
  const [ra, rb] = await Promise.all([a.done, b.done]);
  expect(ra.code, ra.out).toBe(0);
  expect(rb.code, rb.out).toBe(0);
  const listings = await te.listings(SN);
  expect(listings.length).toBe(KEYS);
  expect(new Set(listings.map((l) => l.MLSNumber)).size).toBe(KEYS);
}

describe('a chatbot lock between two feedsync processes on one host name', () => {
  // The state file's LMDB environment marks its readers by PID (a byte lock at the PID's offset of
  // its lock file) and its writers by thread id: a second PID 1 of another namespace with the store
  // open at once crashed at open ("Cannot read properties of null (reading 'address')"). The store
  // is open in one process at a time (file-store.ts, its open lock), so the second waits.
  it.skipIf(!root)(
    'PID 1 of two PID namespaces (file lock): the second waits, every key once',
    async () => {
      const config = await setUp();
      const ns = ['unshare', '--pid', '--fork', '--mount-proc'];
      try {
        await contend(
          () => run(ns, config),
          () => run(ns, config),
          lockFileHeld,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    180_000,
  );

  it.skipIf(!root)(
    'another boot id (Redis lock): the second waits for the holder, not its boot, every key once',
    async () => {
      const prefix = `fstest-holders-${process.pid}-${Date.now()}`;
      const config = await setUp(prefix);
      const bootId = join(dir, 'boot_id');
      await writeFile(bootId, '11111111-2222-4333-8444-555555555555\n');
      const otherBoot = [
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        `mount --bind "${bootId}" /proc/sys/kernel/random/boot_id && exec "$0" "$@"`,
      ];
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      const key = targetLockKey(prefix, chatbotLockName({ chatbot: SN }, 'sync'));
      try {
        await contend(
          () => run([], config),
          () => run(otherBoot, config),
          async () => (await redis.exists(key)) === 1,
        );
      } finally {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length) await redis.del(...keys);
        await redis.quit();
        await rm(dir, { recursive: true, force: true });
      }
    },
    180_000,
  );

  it('a clock 30 s ahead (file lock): the second judges the heartbeat by its own clock, every key once', async () => {
    const config = await setUp();
    try {
      await contend(
        () => run([], config),
        () => run([], config, { FEEDSYNC_TEST_CLOCK_AHEAD_MS: '30000' }),
        lockFileHeld,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
