// The built command runs like the tsx one: it finds its package.json for --version and the starter
// templates `init` copies. Built into a folder of its own (what `npm run build` does, with the
// folder given), so the repository's dist/ is never rebuilt under other tests' feet; the one
// repository dist/ is what bin/feedsync.js would choose: the bundle (dist/bundle/), else the
// compiled modules (dist/src/), and a stale build is never chosen. An installed package (no src/)
// runs only its build: none, or one of another version, is one line.
import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
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
}, 600_000); // (two builds: ~20 s quiet, over 120 s on a loaded machine)

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

  it('runs the bundle when it is there, else the compiled modules', async () => {
    const cli = join(pkg, 'bin/feedsync.js');
    const compiled = join(pkg, 'dist/src/cli.js');
    const original = await readFile(compiled, 'utf8');
    try {
      // the compiled entry says so if it runs; the bundle's modules only name their compiled files
      await writeFile(compiled, "process.stdout.write('the compiled modules');\n");
      expect((await run(process.execPath, [cli, '--version'], { cwd: work })).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
      await rename(join(pkg, 'dist/bundle'), join(pkg, 'dist/bundle-aside'));
      expect((await run(process.execPath, [cli, '--version'], { cwd: work })).stdout).toBe('the compiled modules');
    } finally {
      await rename(join(pkg, 'dist/bundle-aside'), join(pkg, 'dist/bundle')).catch(() => undefined);
      await writeFile(compiled, original);
    }
  });

  it('the installed package syncs the demo: iconv-lite imported from node_modules at its latin1 feed, undici with no node:http2 loaded', async () => {
    // (both are loaded when used, not at every start: src/feeds/iconv.ts; scripts/bundle.js lazyHttp2)
    const demo = await mkdtemp(join(tmpdir(), 'feedsync-demo-'));
    try {
      for (const f of ['demo.yaml', 'feeds']) await cp(join(root, 'fixtures', f), join(demo, f), { recursive: true });
      const probe = join(demo, 'builtins.cjs');
      await writeFile(
        probe,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(demo, 'builtins.txt'))}, process.moduleLoadList.join('\\n')));\n`,
      );
      const r = await run(
        process.execPath,
        [
          '--require',
          probe,
          join(pkg, 'bin/feedsync.js'),
          'sync',
          '--config',
          join(demo, 'demo.yaml'),
          '--dry-run',
          '--json',
        ],
        { cwd: work, env: { ...process.env, LOG_LEVEL: 'warn' } },
      );
      const { reports } = JSON.parse(r.stdout) as {
        reports: Array<{ feed: string; outcome: string; counts: { valid: number } }>;
      };
      expect(reports.map((x) => [x.feed, x.outcome])).toEqual([
        ['austin-csv', 'ok'],
        ['zillow-xml', 'ok'],
        ['listhub-xml', 'ok'],
        ['reso-replay', 'ok'],
      ]);
      expect(reports.find((x) => x.feed === 'listhub-xml')?.counts.valid).toBe(245); // (its ISO-8859-1 decoded)
      const loaded = (await readFile(join(demo, 'builtins.txt'), 'utf8')).split('\n');
      expect(loaded).toContain('NativeModule zlib'); // (the probe sees builtins required)
      expect(loaded).not.toContain('NativeModule http2');
    } finally {
      await rm(demo, { recursive: true, force: true });
    }
  });

  it("the bundle carries zod's English messages alone, and no module of ours asks for another language", async () => {
    // (scripts/bundle.js zodEnglishOnly: z.locales is English alone in the bundle)
    const bundle = join(pkg, 'dist/bundle');
    const locales = new Set<string>();
    for (const f of (await readdir(bundle)).filter((f) => f.endsWith('.js.map'))) {
      const { sources } = JSON.parse(await readFile(join(bundle, f), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const m = /node_modules\/zod\/v4\/locales\/([^/]+)\.js$/.exec(source);
        if (m) locales.add(m[1]!);
      }
    }
    expect([...locales]).toEqual(['en']);
    const asking: string[] = [];
    for (const dir of ['src', 'jobs'])
      for (const f of await readdir(join(root, dir), { recursive: true }))
        if (
          f.endsWith('.ts') &&
          /\b(z|core)\.locales\b|zod\/(v4\/)?locales/.test(await readFile(join(root, dir, f), 'utf8'))
        )
          asking.push(`${dir}/${f}`);
    expect(asking).toEqual([]);
  });

  it('an installed package with no build, or a build of another version, says so in one line and runs nothing else', async () => {
    const cli = join(pkg, 'bin/feedsync.js');
    const fails = (args: string[]) =>
      run(process.execPath, [cli, ...args], { cwd: work }).then(
        () => undefined,
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
    const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(JSON.parse(await readFile(join(pkg, 'dist/build.json'), 'utf8'))).toEqual({ version });
    await writeFile(join(pkg, 'dist/build.json'), JSON.stringify({ version: '0.0.1' }));
    try {
      const stale = await fails(['init']);
      expect(stale?.code).toBe(1);
      expect(stale?.stdout).toBe('');
      expect(stale?.stderr).toBe(
        `feedsync: this installation's build (dist/) is of feedsync 0.0.1, its package.json of ${version}: reinstall the package\n`,
      );
    } finally {
      await writeFile(join(pkg, 'dist/build.json'), JSON.stringify({ version }));
    }
    await rename(join(pkg, 'dist'), join(pkg, 'dist-aside'));
    try {
      const none = await fails(['--version']);
      expect(none?.code).toBe(1);
      expect(none?.stderr).toBe(
        `feedsync: this installation of feedsync ${version} has no build (dist/ is missing): reinstall the package\n`,
      );
    } finally {
      await rename(join(pkg, 'dist-aside'), join(pkg, 'dist'));
    }
    expect(await readdir(work)).not.toContain('node_modules');
  });

  it('runs the sources through tsx instead once a source is newer than the build (the bundle as the compiled modules), and runs them right; a terminal is told in one line', async () => {
    // the repository's sources, copied after the build: newer than it
    await cp(join(root, 'src'), join(pkg, 'src'), { recursive: true });
    const cli = join(pkg, 'bin/feedsync.js');
    const built = await run(process.execPath, [join(pkg, 'dist/src/cli.js'), '--version'], { cwd: work });
    const r = await run(process.execPath, [cli, '--version'], { cwd: work });
    expect(r.stdout).toBe(built.stdout);
    expect(r.stderr).toBe(''); // not a terminal: stderr is the command's own (JSON log lines)
    // on a terminal (script(1) gives the command one), one line says why the start is slower
    const tty = await run(
      'script',
      ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} --version`, '/dev/null'],
      { cwd: work },
    );
    expect(tty.stdout.replace(/\r/g, '')).toBe(
      'feedsync: src/ is newer than dist/: running the sources through tsx (slower to start; `npm run build` rebuilds dist/)\n' +
        built.stdout,
    );
    // what runs is the sources: a change there shows
    await writeFile(join(pkg, 'src/cli.ts'), "const from: string = 'the sources';\nprocess.stdout.write(from);\n");
    expect((await run(process.execPath, [cli], { cwd: work })).stdout).toBe('the sources');
  });
});

describe('npm ci builds dist/ (the prepare script)', () => {
  it('package.json runs the build at install, and it builds nothing, saying why, where there are no sources', async () => {
    const { scripts } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
    expect(scripts.prepare).toBe('node scripts/build.js --prepare');
    // an image's first stage installs before its sources are copied: no src/ next to scripts/
    const bare = await mkdtemp(join(tmpdir(), 'feedsync-prepare-'));
    try {
      await mkdir(join(bare, 'scripts'));
      await copyFile(join(root, 'scripts/build.js'), join(bare, 'scripts/build.js'));
      await symlink(join(root, 'node_modules'), join(bare, 'node_modules'));
      const r = await run(process.execPath, [join(bare, 'scripts/build.js'), '--prepare'], { cwd: bare });
      expect(r.stderr).toBe('feedsync prepare: dist/ not built: no src/ to build\n');
      expect(await readdir(bare)).not.toContain('dist');
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });
});
