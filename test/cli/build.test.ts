// The built command (`npm run build`, then `node dist/src/cli.js`) works like the tsx one: it finds
// its package.json for --version and the starter templates `init` copies.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const cli = join(root, 'dist/src/cli.js');
let dir: string;

beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: root });
  dir = await mkdtemp(join(tmpdir(), 'feedsync-build-'));
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm run build', () => {
  it('prints the version and writes the starter config from dist/', async () => {
    const version = await run('node', [cli, '--version'], { cwd: dir });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    await run('node', [cli, 'init'], { cwd: dir });
    expect((await readdir(dir)).sort()).toEqual(['feeds', 'feedsync.yaml']);
  });
});
