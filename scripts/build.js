#!/usr/bin/env node
// `npm run build`: compiles src/ and jobs/ into dist/ (or the folder given), afresh, with the
// templates `feedsync init` copies. bin/feedsync.js runs dist/ when it is newer than every source.
// `--prepare` (npm's prepare script, run by `npm ci` and `npm install` in a clone): the same, so the
// command a user runs starts compiled with no step to remember; skipped, with one line saying so,
// where there is nothing to build from (no src/: an image's install before its sources are copied)
// or nothing to build with (no typescript: `npm ci --omit=dev`).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const prepare = args.includes('--prepare');
const out = resolve(args.find((a) => a !== '--prepare') ?? resolve(root, 'dist'));
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch (err) {
  if (!prepare) throw err;
}
if (prepare && (!tsc || !existsSync(resolve(root, 'src/cli.ts')))) {
  process.stderr.write(`feedsync prepare: dist/ not built: ${tsc ? 'no src/ to build' : 'typescript is not installed (dev dependencies omitted)'}\n`);
  process.exit(0);
}

rmSync(out, { recursive: true, force: true }); // a source removed since the last build leaves no module behind
// (--noCheck: the emit alone, a third of the time; the same JavaScript, as every module compiles on its
// own (isolatedModules, verbatimModuleSyntax); the types are checked by `npm run typecheck`)
execFileSync(process.execPath, [tsc, '-p', resolve(root, 'tsconfig.build.json'), '--outDir', out, '--noCheck'], { stdio: 'inherit' });
cpSync(resolve(root, 'src/cli/templates'), resolve(out, 'src/cli/templates'), { recursive: true });
