// Issue 23: `feedsync init` never writes through a symbolic link. A link planted where the config or
// the sample feed goes (pointing at a file of the user's, or nowhere yet) is refused, --force too,
// and what it points at is left as it was.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-init-'));
  dirs.push(dir);
  return dir;
}

describe('feedsync init and links', () => {
  it('refuses a config path that is a link, with --force too; the file it points at is untouched', async () => {
    const dir = await tempDir();
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'precious\n');
    await symlink(victim, join(dir, 'feedsync.yaml'));
    const run = await feedsync(['init', '--config', join(dir, 'feedsync.yaml'), '--force']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/symbolic link/);
    expect(await readFile(victim, 'utf8')).toBe('precious\n');
  });

  it('refuses a dangling link where the sample feed goes (it would create the file it points at)', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'feeds'));
    const target = join(dir, 'elsewhere.csv');
    await symlink(target, join(dir, 'feeds', 'listings.csv'));
    const run = await feedsync(['init', '--config', join(dir, 'feedsync.yaml')]);
    // the feed path is taken (by a link): init leaves it alone and writes nothing through it
    expect(existsSync(target)).toBe(false);
    expect(run.code).toBe(0);
  });

  it('refuses a feeds folder that is a link', async () => {
    const dir = await tempDir();
    const outside = await tempDir();
    await symlink(outside, join(dir, 'feeds'));
    const run = await feedsync(['init', '--config', join(dir, 'feedsync.yaml')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/feeds is a symbolic link/);
    expect(existsSync(join(outside, 'listings.csv'))).toBe(false);
  });

  it('writes a fresh config and feed as before', async () => {
    const dir = await tempDir();
    const run = await feedsync(['init', '--config', join(dir, 'feedsync.yaml')]);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(dir, 'feeds', 'listings.csv'))).toBe(true);
    expect((await feedsync(['init', '--config', join(dir, 'feedsync.yaml'), '--force'])).code).toBe(0);
  });
});
