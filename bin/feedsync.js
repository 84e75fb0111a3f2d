#!/usr/bin/env node
// Runs the built command when it is there and was built from the sources as they are (an image or an
// installed package ships no src/; a clone, built at `npm ci`/`npm install` by the prepare script):
// the bundle in dist/bundle/ (a few files to load), else the compiled modules in dist/src/; else the
// TypeScript sources through tsx (a dev dependency): an edit made after a build never runs stale. A
// build older than the sources says so in one line on a terminal's stderr.
import module from 'node:module';
import { existsSync, readdirSync, statSync } from 'node:fs';

// (Node >= 22.1: the compiled code of the modules a start loads is kept on disk for the next start)
module.enableCompileCache?.();

const root = new URL('../', import.meta.url);
const built = [new URL('dist/bundle/cli.js', root), new URL('dist/src/cli.js', root)].filter((url) => existsSync(url));
const fresh = built.find((url) => !newerSourceThan(statSync(url).mtimeMs));

if (fresh) {
  await import(fresh.href);
} else {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    process.stderr.write(
      'feedsync: no build to run and no tsx to run the sources: `npm run build` writes dist/, ' + 'or `npm install` (with the dev dependencies) installs tsx.\n',
    );
    process.exit(1);
  }
  // (to a person at a terminal: elsewhere stderr carries JSON log lines, or exactly what a command prints)
  if (built.length > 0 && process.stderr.isTTY)
    process.stderr.write(`feedsync: src/ is newer than dist/: running the sources through tsx (slower to start; \`npm run build\` rebuilds dist/)\n`);
  tsx.register();
  await import('../src/cli.ts');
}

/** Whether a file under src/ or jobs/ (code, or a template `init` copies) changed after `builtAt`. */
function newerSourceThan(builtAt) {
  const walk = (dir) => {
    if (!existsSync(dir)) return false;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
      if (entry.isDirectory() ? walk(path) : statSync(path).mtimeMs > builtAt) return true;
    }
    return false;
  };
  return walk(new URL('src/', root)) || walk(new URL('jobs/', root));
}
