// The identity of installed code: what a remembered result depends on besides its inputs. A stamp
// (record-stamp.ts) or a remembered page row (page-echo.ts) made by other code is not trusted.
// A build (scripts/build.js) writes the sha1 of each of its modules beside them (CODE_HASHES), so a
// process started from dist/ reads one file instead of the ~35 modules a `sync` asks about (~5 ms
// of CPU before its first API call); run from the sources (tsx), the files themselves are read.
import { hash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The build's hashes, in dist/src/ beside the modules they describe: `{ "mapping/compile.js": sha1 }`. */
export const CODE_HASHES = 'code-hashes.json';

const known = new Map<string, string>();
/** src/ (or dist/src/): what codeIdentity's paths are relative to. */
const SRC = new URL('../../', import.meta.url);
/** CODE_HASHES as read (false: none, the sources running), once a process */
let built: Record<string, string> | false | undefined;

/**
 * The sha1 of the named folders and modules (relative to src/, a module without its extension), as
 * installed: their .ts or .js files, src or dist alike. Read once per process.
 */
export function codeIdentity(paths: readonly string[]): string {
  const name = paths.join('\n');
  let id = known.get(name);
  if (id === undefined) {
    if (built === undefined) built = readCodeHashes(SRC) ?? false;
    id = identityOf(paths, SRC, built || undefined);
    known.set(name, id);
  }
  return id;
}

/**
 * codeIdentity of `paths` under the folder `src`: from `hashes` (codeHashes of that folder) when
 * given, else from the files. The same identity either way while the files are those hashed.
 */
export function identityOf(paths: readonly string[], src: URL, hashes?: Readonly<Record<string, string>>): string {
  const parts: string[] = [];
  for (const path of paths) {
    const files = hashes ? hashedUnder(hashes, path) : filesUnder(fileURLToPath(new URL(path, src)));
    if (files) {
      for (const f of files)
        parts.push(`${path}/${f}`, hashes?.[`${path}/${f}`] ?? fileHash(join(fileURLToPath(src), path, f)));
      continue;
    }
    const file = ['.ts', '.js']
      .map((ext) => path + ext)
      .find((f) => (hashes ? f in hashes : existsSync(new URL(f, src))));
    if (!file) throw new Error(`codeIdentity: no module ${path} in ${fileURLToPath(src)}`);
    parts.push(path, hashes?.[file] ?? fileHash(fileURLToPath(new URL(file, src))));
  }
  return hash('sha1', parts.join('\n'), 'base64url');
}

/** The sha1 of each .ts and .js file under `dir`, by its path relative to it: what a build writes as CODE_HASHES. */
export function codeHashes(dir: string): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const f of filesUnder(dir) ?? []) hashes[f] = fileHash(join(dir, f));
  return hashes;
}

/** Writes codeHashes(dir) into dir (scripts/build.js, for dist/src/). */
export function writeCodeHashes(dir: string): void {
  writeFileSync(join(dir, CODE_HASHES), JSON.stringify(codeHashes(dir)) + '\n');
}

/** The build's CODE_HASHES of `src`, or null where there is none (the sources, run through tsx). */
function readCodeHashes(src: URL): Record<string, string> | null {
  const file = new URL(CODE_HASHES, src);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch (err) {
    throw new Error(`${fileURLToPath(file)}: not the JSON a build writes: \`npm run build\` rebuilds it`, {
      cause: err,
    });
  }
}

/** The .ts and .js files under the folder `dir` (relative paths, sorted), or undefined when it is no folder. */
function filesUnder(dir: string): string[] | undefined {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return undefined;
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|js)$/.test(f))
    .sort();
}

/** The hashed files under the folder `path`, relative to it and sorted as filesUnder sorts; undefined when none. */
function hashedUnder(hashes: Readonly<Record<string, string>>, path: string): string[] | undefined {
  const files = Object.keys(hashes)
    .filter((f) => f.startsWith(`${path}/`))
    .map((f) => f.slice(path.length + 1))
    .sort();
  return files.length > 0 ? files : undefined;
}

function fileHash(file: string): string {
  return hash('sha1', readFileSync(file), 'base64url');
}
