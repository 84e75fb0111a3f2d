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
// or nothing to build with (no typescript or esbuild: `npm ci --omit=dev`).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

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
if (prepare && (missing.length > 0 || !existsSync(resolve(root, 'src/cli.ts')))) {
  const why = missing.length > 0 ? `${missing.join(' and ')} not installed (dev dependencies omitted)` : 'no src/ to build';
  process.stderr.write(`feedsync prepare: dist/ not built: ${why}\n`);
  process.exit(0);
}

rmSync(out, { recursive: true, force: true }); // a source removed since the last build leaves no module behind
// (--noCheck: the emit alone, a third of the time; the same JavaScript, as every module compiles on its
// own (isolatedModules, verbatimModuleSyntax); the types are checked by `npm run typecheck`)
execFileSync(process.execPath, [tsc, '-p', resolve(root, 'tsconfig.build.json'), '--outDir', out, '--noCheck'], { stdio: 'inherit' });
cpSync(resolve(root, 'src/cli/templates'), resolve(out, 'src/cli/templates'), { recursive: true });
// (imported here, not at the top: a prepare without the dev dependencies stops above, without esbuild)
const { bundle } = await import('./bundle.js');
await bundle({ entry: resolve(out, 'src/cli.js'), compiled: out, outdir: resolve(out, 'bundle'), nodeModules: resolve(root, 'node_modules') });
