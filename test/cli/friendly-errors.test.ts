// What a person can fix is said in one paragraph, never a stack trace: the thing, what is wrong, what
// to do, and what doing it costs. A state file that is not JSON or not a state store, one that cannot be opened,
// a port in use, a Redis that refuses the password.
import '../setup/needs-redis.js';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvironmentError } from '../../src/errors.js';
import { createFileStore } from '../../src/state/file-store.js';
import { feedsync } from '../settings/run-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A config that would sync a two-row feed into the embedded emulator, with `extra` YAML lines, its text through `edit`. */
async function setup(
  extra: string[] = [],
  edit: (yaml: string) => string = (yaml) => yaml,
): Promise<{ dir: string; config: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-friendly-'));
  dirs.push(dir);
  await writeFile(join(dir, 'homes.csv'), 'MLSNumber,City\nM1,Austin\nM2,Austin\n');
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    edit(
      [
        'api: { baseUrl: embedded, secretKey: dev-secret-key, sessionKey: dev-session-key }',
        ...extra,
        'chatbots: [{ serialNumber: SN-F }]',
        'feeds:',
        '  - { name: homes, chatbot: SN-F, source: { kind: csv, path: homes.csv }, mapping: { fields: { MLSNumber: MLSNumber, City: City } } }',
      ].join('\n'),
    ),
  );
  return { dir, config };
}

/** One paragraph on stderr, starting `feedsync: `, with no stack frame. */
function paragraph(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^feedsync: /);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

describe('errors a person can fix', () => {
  it('a state file of the former format that is not valid JSON: the file, what is wrong, restore or move aside, and what that costs', async () => {
    const { dir, config } = await setup();
    const state = join(dir, '.feedsync', 'state.json');
    await mkdir(join(dir, '.feedsync'));
    await writeFile(state, '{"fp:homes":{"M1":"abc'); // cut short by a full disk
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const text = paragraph(r.stderr);
    expect(text).toContain(`The state file ${state}:1:23 is not valid JSON (it ends there; 22 characters)`);
    expect(text).toContain('Restore it from a backup, or move it aside');
    expect(text).toContain('rewrites nothing that matches');
  });

  it('a state file that cannot be opened names it, why, and what to do', async () => {
    const { dir, config } = await setup(['state: { file: state-folder }']);
    await mkdir(join(dir, 'state-folder'));
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const text = paragraph(r.stderr);
    expect(text).toContain(
      `The state file ${join(dir, 'state-folder')} cannot be opened: it is a folder where a file was expected (EISDIR)`,
    );
    expect(text).toContain('set state.file to another path');
  });

  it("a file in the state file's place that is not a state store is refused before it is opened (LMDB would crash on it)", async () => {
    const { dir, config } = await setup(['state: { file: state.lmdb }']);
    await writeFile(join(dir, 'state.lmdb'), JSON.stringify({ 'fp:homes': { M1: 'x'.repeat(20_000) } }));
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const text = paragraph(r.stderr);
    expect(text).toContain(
      `The state file ${join(dir, 'state.lmdb')} is not a state store (an LMDB file): another file took its place. Move it aside`,
    );
  });

  // (before, the process died with SIGBUS, exit 135: LMDB read a page past the end of the mapped file;
  // the cut points one by one, and files that end short and are valid, in test/state/lmdb-header.test.ts)
  it('a state file cut short (a copy or a full disk) is refused before LMDB maps it: what it holds, what its header says, restore or move aside', async () => {
    const { dir, config } = await setup(['state: { file: state.lmdb }']);
    const path = join(dir, 'state.lmdb');
    const store = await createFileStore(path);
    for (let b = 0; b < 5; b++)
      await store.set(
        'fp:homes',
        Array.from({ length: 20_000 }, (_, i) => [`K${b}-${i}`, 'x'.repeat(40)] as const),
      );
    await store.close();
    const { size } = await stat(path);
    await truncate(path, Math.floor(size / 2));
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const text = paragraph(r.stderr);
    const said = text.match(/is cut short: it holds (\d+) bytes of the (\d+) its header says are in use/);
    expect(text).toContain(`The state file ${path} is cut short`);
    expect(Number(said?.[1])).toBe(Math.floor(size / 2));
    expect(Number(said?.[2])).toBeGreaterThanOrEqual(size); // a valid file may end short of its header's last page, never beyond it
    expect(text).toContain('Restore it from a backup');
    expect(text).toContain('rewrites nothing that matches');
  });

  it('a state file whose folder cannot be made: the part of the path in the way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-friendly-'));
    dirs.push(dir);
    await writeFile(join(dir, 'gone'), 'a file where the state folder should be');
    const err = await createFileStore(join(dir, 'gone', 'state.lmdb')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EnvironmentError);
    expect((err as Error).message).toMatch(
      /^The state file .*state\.lmdb cannot be opened: it cannot be made: a part of its path is a file where a folder is needed/,
    );
  });

  // (before: `cannot open the feed file (/abs/homes.csv): ENOENT: no such file or directory, stat '/abs/homes.csv'`,
  // and a folder read as `EISDIR: illegal operation on a directory, read`)
  it('a feed file that does not exist, or a folder in its place: the feed fails (exit 1) naming the path, what is wrong and the setting to fix', async () => {
    const { dir, config } = await setup();
    await rm(join(dir, 'homes.csv'));
    const missing = await feedsync(['sync', '--config', config]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `feed homes → chatbot SN-F: failed — the feed was not read whole, so nothing was deleted: homes.csv: the feed file ${join(dir, 'homes.csv')} does not exist (ENOENT): check feeds[].source.path (a relative path is relative to the config file's folder), or put the file there\n`,
    );
    expect(missing.stderr).not.toMatch(/no such file or directory|, stat '|^\s+at /m);
    // feed preview says it first, as sync does, not below an empty listing and zero counts
    const preview = await feedsync(['feed', 'preview', '--feed', 'homes', '--config', config]);
    expect(preview.code).toBe(1);
    expect(preview.stdout.split('\n')[0]).toBe(
      `failed: not one record was read: homes.csv: the feed file ${join(dir, 'homes.csv')} does not exist (ENOENT): check feeds[].source.path (a relative path is relative to the config file's folder), or put the file there`,
    );

    await mkdir(join(dir, 'homes.csv'));
    const folder = await feedsync(['sync', '--config', config]);
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain(
      `homes.csv: the feed file ${join(dir, 'homes.csv')} is a folder where a file was expected (EISDIR): point feeds[].source.path at the feed file inside it\n`,
    );
    expect(folder.stderr).not.toMatch(/illegal operation|^\s+at /m);
  });

  // (the report's first line said what failed, not that a rerun may succeed; --json said retryable: true)
  it('a service that does not answer: the first line says so and that a rerun may succeed (exit 1)', async () => {
    const { config } = await setup([], (y) =>
      y.replace('baseUrl: embedded', 'baseUrl: http://127.0.0.1:1, retries: 1'),
    );
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const first = r.stderr.split('\n').find((l) => l.startsWith('feed homes'));
    expect(first).toMatch(
      /^feed homes → chatbot SN-F: unavailable — .*ECONNREFUSED 127\.0\.0\.1:1.*\(transient: a rerun may succeed\)$/,
    );
  });

  // (chatbots[] is for settings and smoke: a feed's chatbot left out of it made the embedded emulator
  // answer 404 "chatbot … not found" to a config check had passed)
  it("the embedded emulator knows every chatbot the config names, a feed's too", async () => {
    const { config } = await setup([], (y) => y.replace('chatbot: SN-F,', 'chatbot: SN-G,'));
    const r = await feedsync(['sync', '--config', config, '--json']);
    // paged, not refused (its two records lack the listing's other fields: rejected, exit 6, as for SN-F)
    const [report] = JSON.parse(r.stdout).reports;
    expect(report).toMatchObject({ chatbot: 'SN-G', outcome: 'rejected', remote: { complete: true } });
    expect(r.stderr).not.toContain('not found');
  });

  it('a port in use: which, and how to choose another', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const r = await feedsync(['emulator', '--port', String(port)]);
      expect(r.code).toBe(1);
      expect(paragraph(r.stderr)).toBe(
        `feedsync: Port ${port} on 127.0.0.1 is in use by another program (EADDRINUSE). Stop what listens there (another emulator?), or give another with --port (0: any free port).`,
      );
    } finally {
      taken.close();
    }
  });

  it('a Redis that refuses the password: nothing run, where to put the right one', async () => {
    const redis = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    redis.username = 'feedsync-no-such-user';
    redis.password = 'not-the-password';
    const { config } = await setup([`redis: { url: "${redis.href}", prefix: feedsync-friendly }`]);
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const text = paragraph(r.stderr);
    expect(text).toContain('refuses the user name or password (WRONGPASS');
    expect(text).toContain('nothing was run and nothing written');
    expect(text).not.toContain('not-the-password');
  });
});
