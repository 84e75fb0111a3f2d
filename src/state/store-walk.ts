// The state file read whole in a child process before this one maps it. LMDB keeps no checksums and
// trusts every page it maps: bytes changed inside a file (a bad disk, a copy over a running store, a
// program writing into it) make a read fail with MDB_PAGE_NOTFOUND or MDB_CORRUPTED, or kill the
// process with SIGSEGV or SIGBUS, in the middle of a run. The header check (lmdb-header.ts) sees a
// file cut short; this walk sees the rest: a child opens the file read-only and reads every key
// and value of every database (the pages of every tree and every overflow page), and a child that
// fails or dies, or reads fewer entries than a database's own count, makes the open fail with one
// paragraph, as a cut file does.
// The walk costs a child reading every entry (0.25-0.3 s for 300k), which every new process would
// pay: a file's identity (device, inode, size, time) is recorded once the walk passed and again at
// feedsync's clean close (`locks/<file>.checked`, 0600, beside the open lock), and a file whose
// identity still matches is not walked again. A file changed since by anything but a clean close of
// feedsync (a copy over it, another program's write, a run that died mid-write) has moved its time or
// inode and is walked. Not looked for: bytes that rot on the disk with nothing changing the file's
// time (removing the record makes the next open walk).
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { EnvironmentError } from '../errors.js';
import { FRESH_STATE_COST } from './legacy-state.js';
import { PRIVATE_FILE_MODE, privateFile } from './private-files.js';

/** How long the walk may take (a store of a million listings is read in seconds). */
export const WALK_TIMEOUT_MS = 10 * 60_000;

/** The child's program: every database of the file read to its end, read-only; exit 0 when all of it reads. */
const WALK = `
const [entry, path] = process.argv.slice(1);
const { open } = await import(entry);
const root = open({ path, noSubdir: true, readOnly: true, maxDbs: 8, compression: false });
let entries = 0;
const names = [...root.getKeys()].filter((name) => typeof name === 'string');
for (const name of names) {
  const db = root.openDB({ name, encoding: 'binary', keyEncoding: 'binary' });
  let read = 0;
  for (const { value } of db.getRange()) read += value === undefined ? 0 : 1;
  const counted = db.getStats().entryCount;
  if (read !== counted) throw new Error('database ' + name + ' holds ' + counted + ' entries by its own count, ' + read + ' could be read');
  entries += read;
}
await root.close();
process.stdout.write(String(entries));
`;

/** Where the identity of the state file at `path` is recorded once it is known whole (beside its open lock). */
export function checkedRecordOf(path: string): string {
  return join(dirname(path), 'locks', `${basename(path)}.checked`);
}

/**
 * The state file at `path` read whole in a child process, unless it is known: unchanged since a walk
 * or a clean close recorded it. An error like a cut file's when it cannot be read whole.
 */
export async function walkStateFile(path: string, timeoutMs = WALK_TIMEOUT_MS): Promise<'walked' | 'known' | 'empty'> {
  const identity = identityOf(path);
  if (identity === undefined) return 'empty';
  if (recorded(path) === identity) return 'known';
  const entry = pathToFileURL(createRequire(import.meta.url).resolve('lmdb')).href;
  const failure = await walkInChild(entry, path, timeoutMs);
  if (failure === undefined) {
    recordChecked(path, identity);
    return 'walked';
  }
  throw new EnvironmentError(
    `The state file ${path}`,
    `is damaged: ${failure}. LMDB would read what is not there and crash`,
    `Restore it from a backup, or move it aside (mv ${path} ${path}.bad) and run again; a state document of feedsync state export goes back in with feedsync state import. Moving it aside costs no listing: ${FRESH_STATE_COST}`,
  );
}

/**
 * Record the state file at `path` as known whole as it is now: called after this process closed it
 * cleanly, holding its open lock (so no other feedsync wrote it since).
 */
export function recordChecked(path: string, identity = identityOf(path)): void {
  if (identity === undefined) return;
  const at = checkedRecordOf(path);
  privateFile(at, "The state file's walk record"); // (a link in its place is refused, not followed)
  writeFileSync(at, identity, { mode: PRIVATE_FILE_MODE });
}

/** the identity recorded for `path`; undefined when none was (or it cannot be read: the file is walked) */
function recorded(path: string): string | undefined {
  try {
    return readFileSync(checkedRecordOf(path), 'utf8');
  } catch {
    return undefined; // (none recorded: the file is walked)
  }
}

/** size, time and inode of a file with something in it; undefined for none or an empty one (LMDB starts it anew) */
function identityOf(path: string): string | undefined {
  try {
    const s = statSync(path);
    return s.size === 0 ? undefined : `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined; // (none yet: made by the open; one that cannot be read is said by the open)
  }
}

/** undefined when the child read it all, else what went wrong, for a person */
function walkInChild(entry: string, path: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', WALK, '--', entry, path], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: timeoutMs,
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) return resolve(undefined);
      const said = /(MDB_[A-Z_]+[^\n]*|Error: [^\n]*)/.exec(stderr)?.[1]?.trim();
      if (signal === 'SIGTERM') resolve(`reading it whole did not end within ${Math.round(timeoutMs / 1000)} s`);
      else if (signal) resolve(`reading it whole killed the reading process (${signal})`);
      else resolve(`reading it whole failed${said ? ` (${said.slice(0, 300)})` : ` (exit ${code})`}`);
    });
  });
}
