// One bundle of a compiled entry (tsc's output): a process start loads a few files instead of one
// per module (~280 of src/, and zod's 95, undici's ~100). Used by scripts/build.js (the CLI:
// dist/src/cli.js into dist/bundle/) and by the sync bench (its compiled sync.bench.js, through
// `node scripts/bundle.js ENTRY COMPILED OUTDIR`), so the bench runs what users run.
// - Splitting: what is imported lazily (await import(): a command's module, S3, e-mail, Redis and
//   the queue, the budgets) is a chunk of its own, loaded only when used.
// - Every module of ours keeps its import.meta.url: the URL of its own compiled file (its tsc twin,
//   which the build keeps), as modules read files next to them (package.json, init's templates,
//   code-identity's compiled files) and start worker threads on the module next to them
//   (src/sync/util/worker-start.ts).
// - npm packages are bundled too, except those that cannot be (they find files of their own beside
//   their code, or are native), those imported with import() (a CommonJS package bundled as a chunk
//   of its own gives import() only a default export, not its named ones, as node does; these are
//   the lazily loaded ones: S3, e-mail, the budgets), and every package such a package imports: a
//   package is either in the bundle or loaded from node_modules, never both, so no process holds
//   two copies of one.
// - undici, as our modules import it, is scripts/undici-entry.js: the few names src/ uses, without
//   the rest of its index (fetch, WebSocket, caches, mocks: half of its 1.1 MB, parsed at every start),
//   and its HTTP/2 client loads node:http2 at its first HTTP/2 connection, not as it loads (lazyHttp2).
// - lmdb, as our modules import it, is its CommonJS build (one file, and msgpackr's one), not its ES
//   modules (~20 files, each resolved and linked at every start of a command that opens the state):
//   lmdbCommonJs.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** What undici's client-h2.js loads node:http2 by, as it loads (undici 7): lazyHttp2Source. */
export const HTTP2_REQUIRE = "http2 = require('node:http2')";

/** Written next to the bundle: each output file's npm packages, `{ "chunk-X.js": ["undici", "zod"] }`. */
export const PACKAGES_FILE = 'packages.json';

/**
 * Packages left in node_modules whatever their code: lmdb and koffi (native addons; koffi, an
 * optional dependency, is imported by a name in a variable, which the first pass cannot see), pino and its transports
 * (they start threads on files of their package), BullMQ with ioredis (loaded only with Redis), and
 * bull-board (its UI's files are found through an eval'd require.resolve, which the first pass cannot see).
 */
const KEPT_OUT = [
  'lmdb',
  'koffi',
  'pino',
  'pino-pretty',
  'thread-stream',
  'bullmq',
  'ioredis',
  '@bull-board/api',
  '@bull-board/ui',
];

/**
 * What a module uses to find files relative to itself: bundled into a chunk, it would name the
 * chunk. The first pass replaces each with MARK, so a use in code (not in a comment) shows.
 */
const MARK = '__feedsyncOwnFile';
const OWN_FILE = [
  '__dirname',
  '__filename',
  'require.resolve',
  'import.meta.url',
  'import.meta.dirname',
  'import.meta.filename',
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [entry, compiled, outdir, nodeModules] = process.argv.slice(2);
  if (!outdir) throw new Error('usage: node scripts/bundle.js ENTRY COMPILED OUTDIR [NODE_MODULES]');
  await bundle({ entry, compiled, outdir, nodeModules });
}

/**
 * Bundles `entry` (a compiled module under `compiled`, tsc's outDir, which must stay where it is)
 * into `outdir`: `outdir/<entry's name>.js` and its chunks, all in that folder. The packages are
 * found in the node_modules above `outdir`, or else in `nodeModules` (a build outside the
 * repository: it runs where a node_modules is beside it). Returns the bundled entry's path and the
 * packages left in node_modules.
 */
export async function bundle({ entry, compiled, outdir, nodeModules }) {
  compiled = resolve(compiled);
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true }); // (esbuild's working folder: the metafile's paths are relative to it)
  const options = {
    entryPoints: [resolve(entry)],
    outdir,
    absWorkingDir: outdir,
    nodePaths: nodeModules ? [resolve(nodeModules)] : [],
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    metafile: true,
    // (node reads them only with --enable-source-maps: stacks in terms of the compiled modules, which
    // are beside them, so the maps do not copy them; and
    // test/bench/profile-summary.mjs maps a CPU profile's chunks back through them)
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'error',
    // (a CommonJS package bundled calls require for node's modules and its own lazy ones)
    banner: {
      js: "import { createRequire as __feedsyncRequire } from 'node:module'; const require = __feedsyncRequire(import.meta.url);",
    },
    plugins: [ownUrls(compiled, outdir), undiciParts(compiled), lazyHttp2(), zodEnglishOnly(), lmdbCommonJs(compiled)],
  };
  // a first pass, not written, finds the packages that cannot be bundled
  const imported = new Set();
  const first = await build({
    ...options,
    write: false,
    external: patterns(KEPT_OUT),
    define: Object.fromEntries(OWN_FILE.map((k) => [k, MARK])),
    plugins: [...options.plugins, importedLater(imported)],
  });
  const unfit = new Set([...KEPT_OUT, ...imported, ...findingOwnFiles(first.outputFiles, outdir)]);
  const kept = keptWithDependencies(unfit, first.metafile, outdir, nodeModules);
  const result = await build({ ...options, external: patterns(kept) });
  const packages = {};
  for (const [output, { inputs }] of Object.entries(result.metafile.outputs)) {
    const names = new Set(
      Object.keys(inputs)
        .map((i) => packageAt(i)?.name)
        .filter(Boolean),
    );
    if (output.endsWith('.js')) packages[output.split('/').pop()] = [...names].sort();
  }
  writeFileSync(join(outdir, PACKAGES_FILE), JSON.stringify(packages, null, 1) + '\n');
  return { entry: join(outdir, entry.split(sep).pop()), kept: [...kept].sort() };
}

/**
 * The packages whose code (in the first pass's output, each module under esbuild's `// path`
 * comment) uses MARK, other than on a line that asks `typeof` of it first (undici: "may be
 * undefined when bundled").
 */
function findingOwnFiles(outputFiles, outdir) {
  const found = new Set();
  for (const { text } of outputFiles) {
    let module;
    for (const line of text.split('\n')) {
      if (line.startsWith('// ')) module = packageAt(resolve(outdir, line.slice(3)));
      else if (module && line.includes(MARK) && !line.includes(`typeof ${MARK}`)) found.add(module.name);
    }
  }
  return found;
}

/** esbuild plugin: adds to `names` each package imported with import(). */
function importedLater(names) {
  return {
    name: 'packages-imported-later',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, ({ path, kind }) => {
        if (kind === 'dynamic-import' && !isBuiltin(path))
          names.add(path.split('/', path.startsWith('@') ? 2 : 1).join('/'));
        return undefined;
      });
    },
  };
}

/** esbuild's external patterns for package names: the package and its subpaths. */
function patterns(names) {
  return [...names].flatMap((n) => [n, `${n}/*`]);
}

/** The package of a path under node_modules: its name and folder; undefined outside node_modules. */
function packageAt(path) {
  const at = path.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const parts = path.slice(at + 'node_modules/'.length).split('/');
  const name = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  return { name, dir: path.slice(0, at + 'node_modules/'.length + name.length) };
}

/**
 * `names` and every package they depend on, transitively (package.json dependencies, optional and
 * peer ones), as node resolves them from each package's folder: what stays in node_modules.
 */
function keptWithDependencies(names, metafile, outdir, nodeModules) {
  const kept = new Set();
  const queue = [];
  const from = (name, dir) => {
    for (let d = dir; ; d = dirname(d)) {
      const pkg = join(d, 'node_modules', name);
      if (existsSync(join(pkg, 'package.json'))) return pkg;
      if (dirname(d) === d) break;
    }
    const pkg = nodeModules && join(resolve(nodeModules), name);
    return pkg && existsSync(join(pkg, 'package.json')) ? pkg : undefined;
  };
  const visit = (name, dir) => {
    if (!dir || kept.has(`${name}\0${dir}`)) return;
    kept.add(`${name}\0${dir}`);
    queue.push({ name, dir });
  };
  for (const name of names) visit(name, from(name, outdir));
  // (a package first seen nested under another resolves from there too)
  for (const input of Object.keys(metafile.inputs)) {
    const at = packageAt(input);
    if (at && names.has(at.name)) visit(at.name, resolve(outdir, at.dir));
  }
  while (queue.length > 0) {
    const { dir } = queue.shift();
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies }))
      visit(dep, from(dep, dir));
  }
  return new Set([...kept].map((k) => k.split('\0')[0]));
}

/**
 * esbuild plugin: `undici` imported by a compiled module of ours is scripts/undici-entry.js, the
 * names src/ uses of it without the rest of its index (that file says why). A package importing
 * undici gets the whole of it.
 */
function undiciParts(compiled) {
  const entry = fileURLToPath(new URL('undici-entry.js', import.meta.url));
  return {
    name: 'undici-parts',
    setup(b) {
      b.onResolve({ filter: /^undici$/ }, ({ importer }) =>
        importer.startsWith(compiled + sep) && !importer.includes(`${sep}node_modules${sep}`)
          ? { path: entry }
          : undefined,
      );
    },
  };
}

/**
 * esbuild plugin: `lmdb` imported by a compiled module of ours is lmdb's CommonJS build, required
 * from node_modules (where lmdb stays: KEPT_OUT): one file (and msgpackr's one) where its ES modules
 * are ~20, resolved, read and linked one by one at every start that opens the state (~6 ms of CPU
 * of a `sync`'s start, Node 24). The same package and version, built by lmdb from the same sources;
 * its native addon is found from its own folder either way. Nothing else in a process imports lmdb
 * (a thread of ours that did would load its ES build, in its own realm).
 */
function lmdbCommonJs(compiled) {
  const namespace = 'lmdb-commonjs';
  return {
    name: namespace,
    setup(b) {
      b.onResolve({ filter: /^lmdb$/ }, ({ importer, kind, namespace: from }) => {
        if (from === namespace) return { path: 'lmdb', external: true }; // (the require below, at run time)
        return kind === 'import-statement' &&
          importer.startsWith(compiled + sep) &&
          !importer.includes(`${sep}node_modules${sep}`)
          ? { path: 'lmdb', namespace }
          : undefined;
      });
      b.onLoad({ filter: /.*/, namespace }, () => ({ contents: "module.exports = require('lmdb');", loader: 'js' }));
    },
  };
}

/**
 * undici's client-h2.js with node:http2 required at its first connect(), not as the module loads:
 * node:http2 is ~28 ms of CPU at every start of a command that loads undici (`sync` included), and
 * a connection is HTTP/2 only when it negotiates it (allowH2, which no Agent of ours sets). Its
 * constants, read as the module loads, are node:http2's own, copied at build (protocol names and
 * codes: ':authority', NGHTTP2_CANCEL). A client-h2.js that no longer requires node:http2 so fails
 * the build: it never runs half changed. test/net/undici-entry.test.ts holds the copy to node:http2.
 */
export function lazyHttp2Source(text, path = 'client-h2.js') {
  if (text.split(HTTP2_REQUIRE).length !== 2) throw new Error(`${path}: no one \`${HTTP2_REQUIRE}\` to make lazy`);
  return text.replace(HTTP2_REQUIRE, `http2 = ${lazyHttp2Module()}`);
}

/** The stand-in for node:http2 in client-h2.js: its constants, and connect() requiring it. */
export function lazyHttp2Module() {
  const { constants } = createRequire(import.meta.url)('node:http2');
  return `{ constants: ${JSON.stringify(constants)}, connect: (...args) => require('node:http2').connect(...args) }`;
}

/** esbuild plugin: undici's client-h2.js as lazyHttp2Source makes it. */
function lazyHttp2() {
  return {
    name: 'lazy-http2',
    setup(b) {
      b.onLoad({ filter: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h2\.js$/ }, ({ path }) => ({
        contents: lazyHttp2Source(readFileSync(path, 'utf8'), path),
        loader: 'js',
        resolveDir: dirname(path),
      }));
    },
  };
}

/**
 * esbuild plugin: zod's `locales` (z.locales, z.core.locales: the error messages of its 60-odd
 * languages, two thirds of its code, read and compiled at every start) as English alone, the
 * language zod sets itself and our messages are written in. No module of ours names another
 * (test/cli/build.test.ts).
 */
function zodEnglishOnly() {
  const namespace = 'zod-english-only';
  return {
    name: namespace,
    setup(b) {
      b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer }) =>
        /[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core|mini)[\\/]/.test(importer)
          ? { path: resolve(dirname(importer), '../locales/en.js'), namespace }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace }, ({ path }) => ({
        contents: `export { default as en } from ${JSON.stringify(path)};`,
        loader: 'js',
        resolveDir: dirname(path),
      }));
    },
  };
}

/**
 * esbuild plugin: in each compiled module of ours, import.meta.url becomes the URL of that module's
 * own file (relative to the chunk it lands in: every chunk is in `outdir`). import.meta.dirname and
 * filename are refused rather than rewritten: none of the code uses them.
 */
function ownUrls(compiled, outdir) {
  return {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, ({ path }) => {
        if (!path.startsWith(compiled + sep) || path.includes(`${sep}node_modules${sep}`)) return undefined;
        const text = readFileSync(path, 'utf8');
        if (/\bimport\.meta\.(dirname|filename)\b/.test(text))
          return {
            errors: [
              {
                text: `${path}: import.meta.dirname/filename would name the bundle's chunk: use new URL(…, import.meta.url)`,
              },
            ],
          };
        const own = relative(outdir, path).split(sep).join('/');
        return {
          contents: text.replace(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(own)}, import.meta.url).href`),
          loader: 'js',
          resolveDir: dirname(path),
        };
      });
    },
  };
}
