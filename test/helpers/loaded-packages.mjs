// Preloaded into a child process (node --import) to write the npm packages it loads, one name a
// line, to the file FEEDSYNC_TEST_LOADED_PACKAGES: ES modules as they are resolved (a resolve hook,
// on the loader's thread), the packages bundled into a file of the bundle as that file is resolved
// (scripts/bundle.js writes which are in which, packages.json, next to them), and CommonJS ones
// from require's cache at exit (on Node 20 a package required, not imported, does not pass the
// resolve hook). The main thread's modules only: a worker
// thread of the run is not followed. Only tests start processes with it
// (test/cli/loads-only-what-it-uses.cli.test.ts).
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
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
const bundles = new Map();
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  // (a builtin imported as an ES module, as `node:http`: its namespace made, its lazy exports read)
  if (resolved.url.startsWith('node:') && !seen.has(resolved.url)) {
    seen.add(resolved.url);
    appendFileSync(out, `${resolved.url}\n`);
  }
  const name = packageOf(resolved.url);
  for (const n of name ? [name] : bundled(resolved.url)) {
    if (seen.has(n)) continue;
    seen.add(n);
    appendFileSync(out, `${n}\n`);
  }
  return resolved;
}

/** The packages bundled into the file at `url`: none unless its folder has a packages.json (a bundle's). */
function bundled(url) {
  if (!url.startsWith('file:')) return [];
  const folder = new URL('./', url).href;
  if (!bundles.has(folder)) {
    const map = new URL('packages.json', folder);
    bundles.set(folder, existsSync(map) ? JSON.parse(readFileSync(map, 'utf8')) : {});
  }
  return bundles.get(folder)[url.slice(folder.length)] ?? [];
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
