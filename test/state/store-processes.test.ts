// The file state store across processes: a process killed (SIGKILL) at a random point of its
// commits leaves the old state or the new one, never a mix, and every commit it reported (and its
// hold of the file is freed: a later open goes on); two processes writing one state file are
// serialized by the store's own locking (the file is open in one process at a time: open-lock.ts),
// so no compare-and-swap of one is lost to the other; an open that waits too long says who holds it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/state/file-store.js';
import { judgeLmdbFile } from '../../src/state/lmdb-header.js';
import { growStore, headerOf } from './lmdb-files.js';

const WRITER = fileURLToPath(new URL('./store-writer.child.ts', import.meta.url));
const KEYS = 20_000;
/** kills, each at a random point (STORE_KILL_ROUNDS for more) */
const ROUNDS = Number(process.env.STORE_KILL_ROUNDS ?? 8);

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function statePath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-state-proc-'));
  dirs.push(dir);
  return join(dir, 'state.lmdb');
}

function writer(args: string[]): {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  next: () => Promise<void>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  let wake = () => {};
  let buffered = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
    wake();
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  void exited.then(() => wake());
  /** resolves at the next line printed (rejects if the process ends first) */
  const next = () =>
    new Promise<void>((resolve, reject) => {
      const seen = lines.length;
      wake = () =>
        lines.length > seen
          ? resolve()
          : child.exitCode !== null || child.signalCode !== null
            ? reject(new Error(`writer ended: ${stderr}`))
            : undefined;
    });
  return { child, lines, exited, next };
}

describe('file store: processes', () => {
  it(`a SIGKILL at a random point of a commit leaves the old state or the new one (${ROUNDS} kills)`, async () => {
    const path = await statePath();
    for (let round = 0; round < ROUNDS; round++) {
      const w = writer(['commits', path, String(KEYS)]);
      await w.next(); // one commit of this process is done: the kill lands among later ones
      await new Promise((r) => setTimeout(r, Math.random() * 400));
      w.child.kill('SIGKILL');
      await w.exited;
      const reported = Number(w.lines.at(-1));
      const store = await createFileStore(path);
      const gen = Number(await store.get('gen', 'gen'));
      const a = await store.getAll('a');
      const values = new Set(a.values());
      const odd = await store.getAll('odd');
      // every commit the process reported is kept; at most the one it was in when killed is added
      expect(gen === reported || gen === reported + 1, `generation ${gen} after ${reported} reported`).toBe(true);
      expect([a.size, [...values]]).toEqual([KEYS, [String(gen)]]);
      expect([odd.size, new Set(odd.values()).size <= 1]).toEqual([gen % 2 === 1 ? 1000 : 0, true]);
      await store.close();
    }
  }, 300_000);

  it('two processes writing one state file are serialized: no compare-and-swap is lost', async () => {
    const path = await statePath();
    const rounds = 150;
    const both = [writer(['count', path, String(rounds), 'one']), writer(['count', path, String(rounds), 'two'])];
    expect(await Promise.all(both.map((w) => w.exited))).toEqual([0, 0]);
    const store = await createFileStore(path);
    expect([await store.get('count', 'n'), (await store.getAll('rounds')).size]).toEqual([
      String(2 * rounds),
      2 * rounds,
    ]);
    await store.close();
  }, 120_000);

  it('an open waits while another process has the file open, then says which process holds it', async () => {
    const path = await statePath();
    const w = writer(['commits', path, '10']);
    try {
      await w.next();
      const err = await createFileStore(path, { waitMs: 600 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as Error).message).toMatch(
        new RegExp(
          `^The state file .*state\\.lmdb is held open by PID ${w.child.pid} on .* \\(.*state\\.lmdb\\.open\\.lock\\), still after 1 s\\. Run again once that run has ended`,
        ),
      );
    } finally {
      w.child.kill('SIGKILL');
      await w.exited;
    }
    const store = await createFileStore(path, { waitMs: 600 }); // the killed holder is gone: freed at once
    expect(Number(await store.get('gen', 'gen'))).toBeGreaterThan(0);
    await store.close();
  }, 60_000);

  it('a state file the header check lets through is one LMDB reads to its end without a crash, cut or not (lmdb-header.ts)', async () => {
    const path = await statePath();
    const keys = await growStore(path, 12); // ends short of its last page: the pages past its end are free
    const whole = await readFile(path);
    const { pageSize, inUse } = headerOf(whole);
    expect(whole.length).toBeLessThan(inUse);
    const verdicts: string[] = [];
    for (let at = whole.length - 16 * pageSize; at <= whole.length; at += pageSize) {
      const cut = join(dirname(path), `cut-${at}.lmdb`);
      await writeFile(cut, whole.subarray(0, at));
      const verdict = judgeLmdbFile(cut).kind;
      verdicts.push(verdict);
      if (verdict !== 'ok') continue;
      // in a process of its own: reading a page past the end would kill it (SIGBUS), not the test
      const reader = spawn(process.execPath, ['--import', 'tsx', WRITER, 'read', cut], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      reader.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
        reader.on('exit', (c, s) => resolve([c, s])),
      );
      expect([code, signal, out.trim()], `cut at ${at} of ${whole.length}`).toEqual([0, null, `a ${keys}`]);
    }
    expect(verdicts.at(-1)).toBe('ok'); // the file as it is
    expect(verdicts).toContain('short'); // and cuts that take a page it uses are refused
  }, 120_000);
});
