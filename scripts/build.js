#!/usr/bin/env node
// `npm run build`: compiles src/ and jobs/ into dist/ (or the folder given), afresh, with the
// templates `feedsync init` copies. bin/feedsync.js runs dist/ when it is newer than every source.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const out = resolve(process.argv[2] ?? resolve(root, 'dist'));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(out, { recursive: true, force: true }); // a source removed since the last build leaves no module behind
execFileSync(process.execPath, [tsc, '-p', resolve(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
cpSync(resolve(root, 'src/cli/templates'), resolve(out, 'src/cli/templates'), { recursive: true });
