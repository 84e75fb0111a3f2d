// The built command runs like the tsx one: it finds its package.json for --version and the starter
// templates `init` copies. Built into a folder of its own (what `npm run build` does, with the
// folder given), so the repository's dist/ is never rebuilt under other tests' feet; the one
// repository dist/ is what bin/feedsync.js would choose, and a stale one is never chosen.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
let pkg: string;
let work: string;

beforeAll(async () => {
  // a package as the image holds it: package.json, node_modules, bin/ and dist/, no src/
  pkg = await mkdtemp(join(tmpdir(), 'feedsync-package-'));
  await run(process.execPath, [join(root, 'scripts/build.js'), join(pkg, 'dist')]);
  await copyFile(join(root, 'package.json'), join(pkg, 'package.json'));
  await mkdir(join(pkg, 'bin'));
  await copyFile(join(root, 'bin/feedsync.js'), join(pkg, 'bin/feedsync.js'));
  await symlink(join(root, 'node_modules'), join(pkg, 'node_modules'));
  work = await mkdtemp(join(tmpdir(), 'feedsync-build-'));
}, 120_000);

afterAll(async () => {
  for (const dir of [pkg, work]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm run build', () => {
  it('bin/feedsync.js runs dist/ where there are no sources: the version, and the starter config init writes', async () => {
    const cli = join(pkg, 'bin/feedsync.js');
    const version = await run(process.execPath, [cli, '--version'], { cwd: work });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    await run(process.execPath, [cli, 'init'], { cwd: work });
    expect((await readdir(work)).sort()).toEqual(['feeds', 'feedsync.yaml']);
  });

  it('runs the sources through tsx instead once a source is newer than the build', async () => {
    await mkdir(join(pkg, 'src'));
    await writeFile(join(pkg, 'src/cli.ts'), "const from: string = 'the sources';\nprocess.stdout.write(from);\n");
    const r = await run(process.execPath, [join(pkg, 'bin/feedsync.js')], { cwd: work });
    expect(r.stdout).toBe('the sources');
  });
});
