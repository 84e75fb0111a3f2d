// A runtime's closers (src/runtime.ts, src/close-all.ts): every one runs whatever one before it did,
// last opened first. On close, the first failure is thrown and the state file is still closed (its
// open lock freed); after a start that failed, the start's error is thrown and a closer that fails
// too is a warning naming what it closes, not nothing.
import { Server } from 'node:http';
import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeAll } from '../src/close-all.js';
import { lockHolder } from '../src/locks/file-lock.js';
import { createRuntime } from '../src/runtime.js';
import { openLockFile } from '../src/state/open-lock.js';
import { changeLogFile, stateFile } from '../src/state/paths.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from './helpers/emulator.js';
import { captureLogs, loadedConfig } from './queue/helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function embedded() {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-runtime-close-'));
  dirs.push(dir);
  return loadedConfig(
    `api: { baseUrl: embedded, secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY} }\nfeeds: []\n`,
    dir,
  );
}

/** the next HTTP server's close (the embedded emulator's) fails, after closing it */
function failingServerClose(): void {
  const close = Server.prototype.close;
  vi.spyOn(Server.prototype, 'close').mockImplementationOnce(function (this: Server, ...args) {
    close.apply(this, args);
    throw new Error('EBADF: the listener is gone');
  });
}

describe('closeAll', () => {
  it('runs every closer, last first, whatever one before it did, and hands each failure on with what it closes', async () => {
    const ran: string[] = [];
    const closers = ['a', 'b', 'c'].map((what) => ({
      what,
      close: () => {
        ran.push(what);
        if (what !== 'a') throw new Error(`${what} broke`);
      },
    }));
    const failed: Array<[string, string]> = [];
    await closeAll(closers, (what, err) => failed.push([what, (err as Error).message]));
    expect(ran).toEqual(['c', 'b', 'a']);
    expect(failed).toEqual([
      ['c', 'c broke'],
      ['b', 'b broke'],
    ]);
    expect(closers).toEqual([]);
  });
});

describe("a runtime's close", () => {
  it('throws the first failure, and still closes the state file', async () => {
    const loaded = await embedded();
    const { logger, warnings } = captureLogs();
    const runtime = await createRuntime(loaded, { logger });
    const lock = openLockFile(stateFile(loaded));
    expect(await lockHolder(lock)).toBeDefined();
    failingServerClose();
    await expect(runtime.close()).rejects.toThrow('EBADF: the listener is gone');
    expect(await lockHolder(lock)).toBeUndefined();
    expect(warnings()).toEqual([]);
  });

  it("after a start that failed: the start's error, and a closer that fails too warned of", async () => {
    const loaded = await embedded();
    // the change log's place is a link: refused after the state file and the emulator are open
    await mkdir(join(loaded.dir, '.feedsync'), { recursive: true, mode: 0o700 });
    await symlink(join(loaded.dir, 'elsewhere.jsonl'), changeLogFile(stateFile(loaded)));
    const { logger, warnings } = captureLogs();
    failingServerClose();
    await expect(createRuntime(loaded, { logger })).rejects.toThrow(/symbolic link/);
    expect(warnings()).toEqual([
      expect.objectContaining({
        closing: 'the embedded emulator',
        err: expect.objectContaining({ message: 'EBADF: the listener is gone' }),
        msg: 'the embedded emulator not closed: EBADF: the listener is gone',
      }),
    ]);
    expect(await lockHolder(openLockFile(stateFile(loaded)))).toBeUndefined();
  });
});
