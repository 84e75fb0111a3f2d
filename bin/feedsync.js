#!/usr/bin/env node
// The `feedsync` command. Two kinds of installation, told apart by whether the TypeScript sources
// are beside this file (src/cli.ts):
// - an installed package or the image (no src/: `files` in package.json ships bin/ and dist/ only)
//   runs only what was built: the bundle in dist/bundle/, else the compiled modules in dist/src/.
//   No build, or a build of another version than package.json's (dist/build.json), is one line
//   saying what to do, never a fallback to anything else.
// - a clone (src/ is there; built at `npm ci`/`npm install` by the prepare script) runs the build
//   while no source is newer than it; else the sources through tsx (a dev dependency), so an edit
//   made after a build never runs stale. On a terminal one stderr line says so. Without tsx (the
//   dev dependencies omitted), a missing or stale build is one line.
import module from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// (Node >= 22.1: the compiled code of the modules a start loads is kept on disk for the next start)
module.enableCompileCache?.();

const root = new URL('../', import.meta.url);
const built = [new URL('dist/bundle/cli.js', root), new URL('dist/src/cli.js', root)].filter((url) => existsSync(url));
const clone = existsSync(new URL('src/cli.ts', root));

if (!clone) {
  const problem = packagedBuildProblem();
  if (problem) fail(problem);
  await start(built[0]);
} else {
  const fresh = built.find((url) => !newerSourceThan(statSync(url).mtimeMs));
  if (fresh) await start(fresh);
  else await runSources();
}

/** What keeps an installed package from running its build, or undefined. */
function packagedBuildProblem() {
  const version = readJson(new URL('package.json', root))?.version;
  if (built.length === 0)
    return `this installation of feedsync ${version ?? ''} has no build (dist/ is missing): reinstall the package`;
  const stamp = readJson(new URL('dist/build.json', root));
  if (stamp?.version !== version)
    return `this installation's build (dist/) is of feedsync ${stamp?.version ?? 'an unknown version'}, its package.json of ${version}: reinstall the package`;
  return undefined;
}

async function runSources() {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    fail(
      built.length > 0
        ? 'src/ is newer than the build in dist/ and tsx (a dev dependency) is not installed to run the sources: `npm run build` rebuilds dist/'
        : 'no build to run (dist/ is missing) and no tsx to run the sources: `npm run build` writes dist/, or `npm install` (with the dev dependencies) installs tsx',
    );
  }
  // (to a person at a terminal: elsewhere stderr carries JSON log lines, or exactly what a command prints)
  if (built.length > 0 && process.stderr.isTTY)
    process.stderr.write(
      `feedsync: src/ is newer than dist/: running the sources through tsx (slower to start; \`npm run build\` rebuilds dist/)\n`,
    );
  tsx.register();
  await start(new URL('src/cli.ts', root));
}

/** Imports the command's entry; a module missing from the installation is one line, not a stack. */
async function start(entry) {
  try {
    await import(entry.href);
  } catch (err) {
    const code = err && typeof err === 'object' ? err.code : undefined;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw err;
    const what = clone ? '`npm ci` reinstalls the dependencies and builds dist/' : 'reinstall the package';
    fail(
      `a module of this installation is missing (${String(err.message).split('\n')[0]}): it is incomplete or changed while it ran; ${what}`,
    );
  }
}

function fail(line) {
  process.stderr.write(`feedsync: ${line}\n`);
  process.exit(1);
}

function readJson(url) {
  try {
    return JSON.parse(readFileSync(url, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Whether a file under src/ or jobs/ (code, or a template `init` copies) changed after `builtAt`:
 * every file's stat (~400 files: ~5 ms of a clone's start; its paths as strings, not URLs, which
 * took ~7 ms).
 */
function newerSourceThan(builtAt) {
  const walk = (dir) => {
    if (!existsSync(dir)) return false;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory() ? walk(path) : statSync(path).mtimeMs > builtAt) return true;
    }
    return false;
  };
  const top = fileURLToPath(root);
  return walk(`${top}src`) || walk(`${top}jobs`);
}
