// A foreground `feedsync sync` with Redis holds its chatbot's lock as a worker job does: renewed, with
// the workers' TTL (worker.lockDurationMs). SIGKILLed mid-run, it leaves a lock that expires within
// that TTL, so the chatbot's worker jobs (on another host: they cannot tell from its holder record
// that it is gone) wait no longer for it than for a dead worker's job. Measured as the lock's PTTL in
// Redis right after the kill: at most lockDurationMs (it was up to 30 s, a TTL of its own).
import '../setup/needs-redis.js';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatbotLockName, targetLockKey } from '../../src/locks/target-lock.js';
import { lockHolderKey } from '../../src/redis/keys.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';
import { requests, total } from '../sync/helpers/feed.js';
import { writeHomesDeployment } from './helpers.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');
const SN = 'SN-FG-KILL';
/** not the default (8000): the foreground run must take it from the config */
const LOCK_MS = 4000;

let te: TestEmulator;
beforeAll(async () => {
  // slow writes: the run is still writing when it is killed
  te = await startTestEmulator({ latencyMs: 30 });
});
afterAll(() => te.close());

describe('a foreground sync killed by SIGKILL', () => {
  it('leaves its chatbot lock with at most worker.lockDurationMs to live, as a worker job does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-fg-kill-'));
    const prefix = uniquePrefix();
    const redis = testRedis();
    const key = targetLockKey(prefix, chatbotLockName({ chatbot: SN }, 'sync'));
    try {
      const config = await writeHomesDeployment(dir, te, {
        chatbot: SN,
        keys: 300,
        redisPrefix: prefix,
        lines: [`worker: { lockDurationMs: ${LOCK_MS} }`],
      });
      const child = spawn(process.execPath, [BIN, 'sync', '--config', config], {
        env: { ...process.env, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, signal) => resolve(signal)),
      );
      // mid-run: writing, and past a renewal of its lock (a quarter of the TTL after it was taken)
      for (;;) {
        if (child.exitCode !== null) throw new Error(`the run ended before it was killed: ${out}`);
        if (total(await requests(te, 'RealEstateCreate')) >= 40) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const [lockTtl, holderTtl] = await Promise.all([redis.pttl(key), redis.pttl(lockHolderKey(key))]);
      // held when it died, and free within the workers' TTL
      expect(lockTtl).toBeGreaterThan(0);
      expect(lockTtl).toBeLessThanOrEqual(LOCK_MS);
      expect(holderTtl).toBeLessThanOrEqual(LOCK_MS);
      expect(total(await requests(te, 'RealEstateCreate'))).toBeLessThan(300);
    } finally {
      await dropPrefix(redis, prefix);
      await redis.quit();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
