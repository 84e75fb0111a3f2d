// The release as a company adopts it (docs/releasing.md): the Node majors package.json supports are
// the ones CI runs (the newest every test, the oldest the quick suite), the image runs the one CI runs
// every test on, as a user other than root, from the packed tarball; the package is publishable
// (no `private`, a build and a bin in `files`, a licence, a changelog whose newest release is the
// version). Read from the files: there is no Docker engine here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as Record<string, unknown> & {
  version: string;
  engines: { node: string };
  bin: Record<string, string>;
  files: string[];
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** The majors of `^22 || ^24`, as numbers. */
const supported = pkg.engines.node.split('||').map((range) => Number(/^\s*\^(\d+)\s*$/.exec(range)?.[1]));
const ci = read('.ci/run');
const ciNode = (name: string) => Number(new RegExp(`^${name}=(\\d+)\\b`, 'm').exec(ci)?.[1]);

describe('the Nodes supported', () => {
  it('engines names 22 and 24 and not 20; @types/node is the lowest', () => {
    expect(supported).toEqual([22, 24]);
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${Math.min(...supported)}\\.`));
  });

  it('CI runs every test on the newest supported Node and the quick suite on the oldest', () => {
    expect(ciNode('FULL_NODE')).toBe(Math.max(...supported));
    expect(ciNode('QUICK_NODE')).toBe(Math.min(...supported));
    expect(ci).toMatch(/^on_full npm test$/m);
    expect(ci).toMatch(/^on_quick npm run test:quick$/m);
    expect(ci).toMatch(/^on_full npm run typecheck$/m);
  });

  it("what runs on a user's machine uses no Node API newer than the oldest release engines allows (22.0.0)", () => {
    // `^22` lets a user run 22.0.0: an API added later is a crash there, at a moment the suite
    // (on the newest 22) never shows. The APIs met so far and the release that added each:
    const newer = [{ api: 'process.getBuiltinModule', since: '22.3.0' }];
    const oldest = `${Math.min(...supported)}.0.0`;
    const shipped = ['bin', 'src', 'jobs', 'scripts'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.(ts|js|mjs)$/.test(f))
        .map((f) => join(dir, f)),
    );
    const uses = newer.flatMap(({ api, since }) =>
      shipped
        .filter((f) => read(f).includes(`${api}(`))
        .map((f) => `${f}: ${api} (Node ${since}, engines allow ${oldest})`),
    );
    expect(uses).toEqual([]);
  });

  it('the README says which in one line', () => {
    const line = read('README.md')
      .split('\n')
      .find((l) => /^Supported Node/.test(l));
    expect(line).toContain(`Node ${Math.min(...supported)} and ${Math.max(...supported)}`);
  });
});

describe('the Dockerfile', () => {
  const stages = read('Dockerfile')
    .split(/^(?=FROM )/m)
    .filter((s) => s.startsWith('FROM'));
  const [build, runtime] = [stages[0] ?? '', stages.at(-1) ?? ''];

  it('runs the Node major CI runs the whole suite on, pinned to a patch release, in every stage', () => {
    expect(stages).toHaveLength(2);
    for (const stage of stages) {
      const [, major] = /^FROM node:(\d+)\.\d+\.\d+-bookworm-slim\b/.exec(stage) ?? [];
      expect(Number(major)).toBe(ciNode('FULL_NODE'));
    }
  });

  it('packs the tarball in the first stage and installs that tarball, production dependencies only, in the runtime', () => {
    expect(build).toMatch(/^RUN npm ci /m);
    expect(build).toMatch(/^RUN .*npm pack /m);
    for (const dir of ['bin', 'src', 'jobs', 'scripts'])
      expect(build).toMatch(new RegExp(`^COPY ${dir} \\./${dir}$`, 'm'));
    expect(runtime).toMatch(/^COPY --from=build \/pkg\/feedsync\.tgz /m);
    expect(runtime).toMatch(/^RUN tar -xzf \/tmp\/feedsync\.tgz /m);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev /m);
    // npm ci runs the prepare script (scripts/build.js --prepare): the script is there before it, in both stages
    for (const stage of [build, runtime]) {
      const script = stage.search(/^COPY scripts(\/build\.js)? \.\/scripts/m);
      expect(script).toBeGreaterThanOrEqual(0);
      expect(script).toBeLessThan(stage.search(/^RUN npm ci /m));
    }
    expect(runtime).not.toMatch(/^COPY (src|jobs|bin|test) /m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
    expect(runtime).toContain('ENTRYPOINT ["node", "/app/bin/feedsync.js"]'); // absolute: `docker run -w /work` runs it in another folder
  });

  it('runs as a user other than root', () => {
    const users = [...runtime.matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBeDefined();
    expect(['root', '0']).not.toContain(users.at(-1));
  });
});

describe('the package', () => {
  it('can be published: no private, a bin in files, the build packed by prepack, the sources not', () => {
    expect(pkg.private).toBeUndefined();
    expect(pkg.name).toBe('feedsync');
    expect(pkg.exports).toBeDefined();
    expect(pkg.files).toEqual(expect.arrayContaining(['bin/', 'dist/']));
    expect(pkg.files.some((f) => /^(src|test|jobs)\b/.test(f))).toBe(false);
    for (const bin of Object.values(pkg.bin)) expect(existsSync(join(root, bin))).toBe(true);
    expect(pkg.scripts.prepack).toBe('node scripts/build.js');
  });

  // npm shows `repository` on the package's page and `npm repo` opens it: a placeholder sends people
  // to a repository that is not the project's (or someone else's). None until the project names its
  // public home (docs/releasing.md); then the README names the same one.
  it('names no repository the project does not name itself', () => {
    const repository = pkg.repository as { url?: string } | string | undefined;
    const url = typeof repository === 'string' ? repository : repository?.url;
    if (url === undefined) return;
    const home = url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(read('README.md')).toContain(home);
  });

  it('has the MIT licence and a changelog whose newest release is the version, under an Unreleased section', () => {
    expect(pkg.license).toBe('MIT');
    const licence = read('LICENSE');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the feedsync authors\n/);
    expect(licence).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
    const headings = [...read('CHANGELOG.md').matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)];
    expect(headings[0]?.[1]).toBe('Unreleased');
    expect(headings[1]?.[1]).toBe(pkg.version);
    expect(headings[1]?.[2]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
