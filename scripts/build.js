#!/usr/bin/env node
// `npm run build`: compiles src/ and jobs/ into dist/ (or the folder given), afresh, with the
// templates `feedsync init` copies, then bundles the command's entry into dist/bundle/
// (scripts/bundle.js): a start loads a few files, not ~280 modules and the packages' hundreds. The
// compiled modules stay: the bundle's modules name them as their own files (templates, worker
// threads' entries, code identity), and they run where there is no bundle. bin/feedsync.js runs the
// bundle when it is newer than every source.
// `--prepare` (npm's prepare script, run by `npm ci` and `npm install` in a clone): the same, so the
// command a user runs starts compiled with no step to remember; skipped, with one line saying so,
// where there is nothing to build from (no src/: an image's install before its sources are copied)
// or nothing to build with (no typescript or esbuild: `npm ci --omit=dev`); and under `npm pack` /
// `npm publish`, whose prepack script builds (strictly: a pack without a build fails).
// The build is made in a folder beside the output and put in its place when whole, so a command
// running meanwhile never finds half a dist/; dist/build.json names the version it was built as
// (bin/feedsync.js of an installed package refuses a build of another version).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const prepare = args.includes('--prepare');
const out = resolve(args.find((a) => a !== '--prepare') ?? resolve(root, 'dist'));
const require = createRequire(import.meta.url);
/** The module's path, or undefined where it is not installed (dev dependencies omitted) and this is the prepare script. */
const found = (module) => {
  try {
    return require.resolve(module);
  } catch (err) {
    if (!prepare) throw err;
    return undefined;
  }
};
const tsc = found('typescript/bin/tsc');
const missing = [tsc ? undefined : 'typescript', found('esbuild') ? undefined : 'esbuild'].filter(Boolean);
if (prepare && ['pack', 'publish'].includes(process.env.npm_command ?? '')) process.exit(0); // (prepack builds)
if (prepare && (missing.length > 0 || !existsSync(resolve(root, 'src/cli.ts')))) {
  const why =
    missing.length > 0 ? `${missing.join(' and ')} not installed (dev dependencies omitted)` : 'no src/ to build';
  process.stderr.write(`feedsync prepare: dist/ not built: ${why}\n`);
  process.exit(0);
}

const next = `${out}.next-${process.pid}`; // a source removed since the last build leaves no module behind
rmSync(next, { recursive: true, force: true });
// (--noCheck: the emit alone, a third of the time; the same JavaScript, as every module compiles on its
// own (isolatedModules, verbatimModuleSyntax); the types are checked by `npm run typecheck`)
execFileSync(process.execPath, [tsc, '-p', resolve(root, 'tsconfig.build.json'), '--outDir', next, '--noCheck'], {
  stdio: 'inherit',
});
cpSync(resolve(root, 'src/cli/templates'), resolve(next, 'src/cli/templates'), { recursive: true });
// (each compiled module's sha1, so a start reads one file for the code identity: src/sync/util/code-identity.ts)
const { writeCodeHashes } = await import(pathToFileURL(resolve(next, 'src/sync/util/code-identity.js')).href);
writeCodeHashes(resolve(next, 'src'));
// (imported here, not at the top: a prepare without the dev dependencies stops above, without esbuild)
const { bundle } = await import('./bundle.js');
await bundle({
  entry: resolve(next, 'src/cli.js'),
  compiled: next,
  outdir: resolve(next, 'bundle'),
  nodeModules: resolve(root, 'node_modules'),
});
const { version } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
writeFileSync(resolve(next, 'build.json'), JSON.stringify({ version }) + '\n');
const old = `${out}.old-${process.pid}`;
if (existsSync(out)) renameSync(out, old);
renameSync(next, out);
rmSync(old, { recursive: true, force: true });
