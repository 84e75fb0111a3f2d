// The identity of installed code: what a remembered result depends on besides its inputs. A stamp
// (record-stamp.ts) or a remembered page row (page-echo.ts) made by other code is not trusted.
import { hash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const known = new Map<string, string>();
/** src/ (or dist/src/): what codeIdentity's paths are relative to. */
const SRC = new URL('../../', import.meta.url);

/**
 * The sha1 of the named folders and modules (relative to src/, a module without its extension), as
 * installed: their .ts or .js files, src or dist alike. Read once per process.
 */
export function codeIdentity(paths: readonly string[]): string {
  const name = paths.join('\n');
  let id = known.get(name);
  if (id === undefined) {
    const parts: string[] = [];
    for (const path of paths) {
      const root = fileURLToPath(new URL(path, SRC));
      if (existsSync(root) && statSync(root).isDirectory()) {
        const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).sort();
        for (const f of files)
          if (/\.(ts|js)$/.test(f)) parts.push(`${path}/${f}`, hash('sha1', readFileSync(join(root, f)), 'base64url'));
        continue;
      }
      const file = ['.ts', '.js'].map((ext) => root + ext).find((f) => existsSync(f));
      if (!file) throw new Error(`codeIdentity: no module ${path} in ${fileURLToPath(SRC)}`);
      parts.push(path, hash('sha1', readFileSync(file), 'base64url'));
    }
    id = hash('sha1', parts.join('\n'), 'base64url');
    known.set(name, id);
  }
  return id;
}
