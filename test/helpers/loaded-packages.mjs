// Preloaded into a child process (node --import) to write the npm packages it loads, one name a
// line, to the file FEEDSYNC_TEST_LOADED_PACKAGES: ES modules as they are resolved (a resolve hook,
// on the loader's thread) and CommonJS ones from require's cache at exit (on Node 20 a package
// required, not imported, does not pass the resolve hook). The main thread's modules only: a worker
// thread of the run is not followed. Only tests start processes with it
// (test/cli/loads-only-what-it-uses.cli.test.ts).
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

/** The package of a module's URL or path: `bullmq`, `@scope/name`; undefined outside node_modules. */
function packageOf(where) {
  const at = where.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const parts = where.slice(at + 'node_modules/'.length).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

// the loader's thread: initialize() and resolve() below are the hooks
let out;
const seen = new Set();
export function initialize(data) {
  out = data.out;
}
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const name = packageOf(resolved.url);
  if (name && !seen.has(name)) {
    seen.add(name);
    appendFileSync(out, `${name}\n`);
  }
  return resolved;
}

// the process's main thread, at preload
const file = process.env.FEEDSYNC_TEST_LOADED_PACKAGES;
if (isMainThread && file) {
  register(import.meta.url, { data: { out: file } });
  process.on('exit', () => {
    const names = new Set(Object.keys(createRequire(import.meta.url).cache).map(packageOf));
    appendFileSync(file, [...names].filter(Boolean).join('\n') + '\n');
  });
}
