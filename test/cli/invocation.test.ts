// The command a printed hint names must run where it is printed: installed, in a clone, elsewhere.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { invocationOf } from '../../src/format/invocation.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { createSyncEnv, csv, homesConfigYaml, rows } from '../sync/helpers/feed.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

let root: string;
let pkg: string;
let script: string;
const realFile = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
};

beforeAll(async () => {
  root = realpathSync(await mkdtemp(join(tmpdir(), 'feedsync-invocation-')));
  pkg = join(root, 'clone');
  script = join(pkg, 'bin', 'feedsync.js');
  await mkdir(join(pkg, 'bin'), { recursive: true });
  await writeFile(script, '');
  await writeFile(join(pkg, 'package.json'), '{}');
  await mkdir(join(root, 'global-bin'));
  await symlink(script, join(root, 'global-bin', 'feedsync'));
  await mkdir(join(root, 'other bin'));
  await writeFile(join(root, 'other bin', 'feedsync'), '');
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('the command a hint names', () => {
  it('installed: feedsync, when PATH finds this script under that name', () => {
    const path = [join(root, 'other bin'), join(root, 'global-bin')].join(':');
    expect(invocationOf({ script, cwd: root, path, npmCommand: undefined, realFile })).toBe('feedsync');
  });

  it('in a clone: npx feedsync (its own bin is on no PATH)', () => {
    const path = [join(root, 'other bin'), join(pkg, 'node_modules', '.bin')].join(':');
    expect(invocationOf({ script, cwd: pkg, path, npmCommand: undefined, realFile })).toBe('npx feedsync');
  });

  it('started through npm (npx feedsync, npm start): npx feedsync, though npm put its .bin on PATH', () => {
    const path = join(root, 'global-bin');
    expect(invocationOf({ script, cwd: root, path, npmCommand: 'exec', realFile })).toBe('npx feedsync');
    expect(invocationOf({ script, cwd: pkg, path, npmCommand: 'run-script', realFile })).toBe('npx feedsync');
  });

  it('elsewhere: node and the script, from where the person stands', () => {
    const elsewhere = { script, path: '/usr/bin', npmCommand: undefined, realFile };
    expect(invocationOf({ ...elsewhere, cwd: root })).toBe('node clone/bin/feedsync.js');
    expect(invocationOf({ ...elsewhere, cwd: join(root, 'other bin') })).toBe(`node ${script}`);
  });

  it('a sync run in this clone prints the hint a person can paste there: npx feedsync runs show RUN', async () => {
    const te = await startTestEmulator();
    const env = await createSyncEnv();
    try {
      const config = join(env.dir, 'feedsync.yaml');
      await writeFile(join(env.dir, 'homes.csv'), csv(rows(3)));
      await writeFile(
        config,
        homesConfigYaml(te.url, { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }, {}),
      );
      // not through npm: as `node bin/feedsync.js` in the clone
      const r = await feedsync(['sync', '--config', config], { npm_command: '' }, { cwd: REPO });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`changes: npx feedsync runs show `);
      const runId = /changes: npx feedsync runs show (\S+)/.exec(r.stderr)![1]!;
      // and pasted, it runs (npx is npm's; the same script here)
      const shown = await feedsync(['runs', 'show', runId, '--config', config], {}, { cwd: REPO });
      expect(shown.code).toBe(0);
      expect(shown.stdout + shown.stderr).toContain(runId);
    } finally {
      await te.close();
      await env.cleanup();
    }
  }, 60_000);
});
