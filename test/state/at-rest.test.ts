// The state at rest (src/state/private-files.ts): its folders 0700, its files 0600 — the state file
// and its LMDB lock file, the change log with its run records, the page echo files — also when
// found more open; a state file or change log that is a symbolic link refused, its target untouched.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEntry } from '../../src/change-log/change-log.js';
import { createFileChangeLog } from '../../src/change-log/file-change-log.js';
import { FeedConfig } from '../../src/config/schema.js';
import { checkDrift, DRIFT_NAMESPACE, keyOf } from '../../src/drift/drift-check.js';
import type { ResoSource } from '../../src/feeds/config-schema.js';
import { silentLogger } from '../../src/log.js';
import { createEchoFiles } from '../../src/state/echo-files.js';
import { createFileStore } from '../../src/state/file-store.js';
import { writeStateJson } from '../../src/state/state-json.js';
import { startResoServer } from '../helpers/reso-server.js';
import { keyedResoRecords } from '../sync/helpers/reso-records.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-at-rest-'));
  dirs.push(dir);
  return dir;
}

const modeOf = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);

const run: RunEntry = {
  runId: 'r1',
  feed: 'homes',
  chatbot: 'SN-1',
  dryRun: false,
  // (now: a run past changeLog.retentionDays is trimmed away)
  startedAt: new Date().toISOString(),
  finishedAt: new Date().toISOString(),
  durationMs: 1000,
  outcome: 'ok',
  summary: 'synced',
  counts: {},
  recorded: 0,
  dropped: 0,
};

describe('the state at rest is its owner’s alone', () => {
  it('makes the state folder 0700 and the state file and its lock file 0600, and narrows them when found more open', async () => {
    const folder = join(await freshDir(), '.feedsync');
    const path = join(folder, 'state.lmdb');
    const store = await createFileStore(path);
    await store.set('fp:a', [['K1', 'f1']]);
    await store.close();
    expect([await modeOf(folder), await modeOf(path), await modeOf(`${path}-lock`)]).toEqual(['700', '600', '600']);
    await chmod(folder, 0o755);
    await chmod(path, 0o644);
    await chmod(`${path}-lock`, 0o666);
    const again = await createFileStore(path);
    expect([await modeOf(folder), await modeOf(path), await modeOf(`${path}-lock`)]).toEqual(['700', '600', '600']);
    expect(await again.get('fp:a', 'K1')).toBe('f1');
    await again.close();
  });

  it('writes the change log (its changes and run records) 0600 in a 0700 folder, a file found more open narrowed', async () => {
    const folder = join(await freshDir(), '.feedsync');
    const path = join(folder, 'changes.jsonl');
    const log = await createFileChangeLog(path);
    await log.finishRuns([run]);
    await log.close();
    expect([await modeOf(folder), await modeOf(path)]).toEqual(['700', '600']);
    await chmod(path, 0o644);
    const again = await createFileChangeLog(path);
    expect(await modeOf(path)).toBe('600');
    expect((await again.runs(undefined, 10)).map((r) => r.runId)).toEqual(['r1']);
    await again.close();
  });

  it('writes the page echo files 0600 in a 0700 folder', async () => {
    const folder = join(await freshDir(), '.feedsync', 'page-echo');
    const echo = createEchoFiles(folder, silentLogger);
    await echo.write('chatbot SN-1', new Uint8Array([1, 2, 3]));
    await echo.settled();
    const [file] = await readdir(folder);
    expect([await modeOf(folder), await modeOf(join(folder, file!))]).toEqual(['700', '600']);
  });

  it('refuses a state file that is a symbolic link, saying where it points, and leaves its target as it was', async () => {
    const dir = await freshDir();
    const elsewhere = join(dir, 'elsewhere.lmdb');
    const real = await createFileStore(elsewhere);
    await real.set('fp:a', [['K1', 'f1']]);
    await real.close();
    const before = await readFile(elsewhere);
    await mkdir(join(dir, '.feedsync'));
    const path = join(dir, '.feedsync', 'state.lmdb');
    await symlink(elsewhere, path);
    await expect(createFileStore(path)).rejects.toThrow(
      `The state file ${path} is a symbolic link (to ${elsewhere}): feedsync does not follow one, so that a link put in the state folder cannot make it write or read its state elsewhere. Put the file itself in its place`,
    );
    expect((await readFile(elsewhere)).equals(before)).toBe(true);
  });

  it('refuses a change log that is a symbolic link, at open and when one takes its place later, and writes nothing through it', async () => {
    const dir = await freshDir();
    const target = join(dir, 'target.txt');
    await writeFile(target, 'not yours\n');
    const path = join(dir, 'changes.jsonl');
    await symlink(target, path);
    await expect(createFileChangeLog(path)).rejects.toThrow(`The change log ${path} is a symbolic link (to ${target})`);
    await rm(path);
    const log = await createFileChangeLog(path);
    await symlink(target, path); // put in its place once it is open (it was not made yet)
    await expect(log.finishRuns([run])).rejects.toThrow(`The change log ${path} is a symbolic link (to ${target})`);
    expect(await readFile(target, 'utf8')).toBe('not yours\n');
  });
});

describe('no credential in the state', () => {
  it("keeps a source's dictionary read under a digest of its URL, and takes the entry kept before under the URL with the userinfo", async () => {
    const PASSWORD = 'hunter2-feed-pass';
    const server = await startResoServer({ records: keyedResoRecords(3, 7) });
    const dir = await freshDir();
    const store = await createFileStore(join(dir, '.feedsync', 'state.lmdb'));
    try {
      const url = new URL(server.url);
      url.username = 'feeduser';
      url.password = PASSWORD;
      const feed = FeedConfig.parse({
        name: 'mls',
        chatbot: 'SN-1',
        source: { kind: 'reso', url: url.toString(), maxPageSize: 50, retries: 0 },
        mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      });
      // what a feedsync before this one kept: the dictionary read under the $metadata URL with the password in it
      const formerId = `${url.toString().replace(/\/$/, '')}/$metadata Property`;
      await store.set(DRIFT_NAMESPACE, [[formerId, '{}']]);
      await checkDrift(feed, { store, ctx: { baseDir: dir, logger: silentLogger } });
      let text = '';
      await writeStateJson(
        store.namespaces().map(([ns]) => [ns, store.entries(ns)] as const),
        async (piece) => {
          text += piece;
        },
      );
      const kept = [...(await store.getAll(DRIFT_NAMESPACE)).keys()];
      expect(kept).toEqual([keyOf(feed.source as ResoSource)]);
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain('feeduser');
    } finally {
      await store.close();
      await server.close();
    }
  });
});
