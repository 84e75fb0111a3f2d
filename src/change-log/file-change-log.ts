// The change log without Redis: JSON lines in one file beside the state file (`changes.jsonl`),
// one line per change ({"c": entry}) or finished run ({"r": run}). Bounded: when the file passes
// maxBytes, or its oldest line is past retentionDays, it is rewritten keeping what is recent
// (written to a temporary file, then renamed). Every text stored is masked of secrets first.
import { constants, createReadStream } from 'node:fs';
import { open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { maskDeep, mayHoldSecret } from '../secrets.js';
import { PRIVATE_FILE_MODE, privateDir, privateFile, symlinked } from '../state/private-files.js';
import { EnvironmentError, FeedsyncError } from '../errors.js';
import { isSystemError, systemProblem } from '../system-error.js';
import { DEFAULT_LIMITS, type ChangeEntry, type ChangeLog, type ChangeLogLimits, type RunEntry } from './change-log.js';

type Line = { c: ChangeEntry } | { r: RunEntry };

/** about 300 bytes a change: maxPerFeed changes of a handful of feeds */
const BYTES_PER_CHANGE = 300;

export async function createFileChangeLog(path: string, limits: ChangeLogLimits = DEFAULT_LIMITS): Promise<ChangeLog> {
  const maxBytes = Math.max(1 << 20, limits.maxPerFeed * BYTES_PER_CHANGE * 4);
  let pending: Promise<void> = Promise.resolve();
  const serial = (fn: () => Promise<void>) => (pending = pending.then(fn));
  // the owner's alone, as the state beside it (state/private-files.ts); a link in its place refused
  privateDir(dirname(path), 'The folder of the change log');
  privateFile(path, 'The change log');

  const write = (lines: Line[]) =>
    serial(async () => {
      await appendPrivate(path, lines.map(lineText).join(''));
      await trimIfNeeded(path, maxBytes, limits.retentionDays);
    });

  async function* read(): AsyncGenerator<Line> {
    await pending;
    try {
      await stat(path);
    } catch (err) {
      if (isSystemError(err) && err.code === 'ENOENT') return; // none written yet: no runs
      throw unreadable(path, err);
    }
    const input = createReadStream(path, 'utf8');
    try {
      for await (const text of createInterface({ input, crlfDelay: Infinity })) {
        const line = parseLine(text);
        if (line) yield line;
      }
    } catch (err) {
      throw unreadable(path, err);
    }
  }

  return {
    location: path,
    append: (entries) => (entries.length ? write(entries.map((c) => ({ c }))) : Promise.resolve()),
    finishRuns: (runs) => (runs.length ? write(runs.map((r) => ({ r }))) : Promise.resolve()),
    async run(runId, limit) {
      let run: RunEntry | undefined;
      const changes: ChangeEntry[] = [];
      let total = 0;
      for await (const l of read()) {
        if ('r' in l && l.r.runId === runId) run = l.r;
        else if ('c' in l && l.c.runId === runId && total++ < limit) changes.push(l.c);
      }
      return { run, changes, total };
    },
    async history(feed, key, limit) {
      const found: ChangeEntry[] = [];
      for await (const l of read()) if ('c' in l && l.c.feed === feed && l.c.change.key === key) found.push(l.c);
      return found.reverse().slice(0, limit);
    },
    async runs(feed, limit) {
      const found: RunEntry[] = [];
      for await (const l of read()) if ('r' in l && (!feed || l.r.feed === feed)) found.push(l.r);
      return found.reverse().slice(0, limit);
    },
    close: () => pending,
  };
}

/**
 * Why the change log cannot be read, for a person. Never an empty log: `runs` would list no runs
 * and `undo` of a run would undo nothing, both without a word.
 */
function unreadable(path: string, err: unknown): unknown {
  if (err instanceof FeedsyncError) return err;
  const why = isSystemError(err) ? systemProblem(err) : undefined;
  // (systemProblem's ENOTDIR is said of a file to be made; this one is read)
  const problem =
    isSystemError(err) && err.code === 'ENOTDIR'
      ? 'has a file where a folder is needed in its path (ENOTDIR)'
      : why?.problem;
  return new EnvironmentError(
    `The change log ${path}`,
    `cannot be read, so no run's changes can be listed or undone: ${problem ? `it ${problem}` : (err as Error).message}`,
    `${why?.remedy ?? 'Make it readable'}; the file is changes.jsonl beside the state file (state.file), and its runs read again once it is in place`,
    { cause: err },
  );
}

/** `text` appended to the file at `path`, made 0600 if new; a symbolic link in its place refused (O_NOFOLLOW). */
async function appendPrivate(path: string, text: string): Promise<void> {
  let file;
  try {
    file = await open(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      PRIVATE_FILE_MODE,
    );
  } catch (err) {
    throw isSystemError(err) && err.code === 'ELOOP' ? symlinked(path, 'The change log') : err;
  }
  try {
    await file.appendFile(text);
  } finally {
    await file.close();
  }
}

async function trimIfNeeded(path: string, maxBytes: number, retentionDays: number): Promise<void> {
  const { size } = await stat(path);
  const cutoff = new Date(Date.now() - retentionDays * 86_400_000).toISOString();
  const head = size > 0 ? await readHead(path) : undefined;
  const oldest = head && atOf(head);
  if (size <= maxBytes && (!oldest || oldest >= cutoff)) return;
  const lines = (await readFile(path, 'utf8')).split('\n').filter(Boolean);
  // keep the newest half of the budget, and nothing past the retention
  const kept: string[] = [];
  let bytes = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const text = lines[i]!;
    const line = parseLine(text);
    if (!line || (atOf(line) ?? '') < cutoff) break;
    bytes += text.length + 1;
    if (bytes > maxBytes / 2) break;
    kept.push(text);
  }
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(
    tmp,
    kept
      .reverse()
      .map((l) => l + '\n')
      .join(''),
    { mode: PRIVATE_FILE_MODE },
  );
  await rename(tmp, path);
}

async function readHead(path: string): Promise<Line | undefined> {
  const input = createReadStream(path, { encoding: 'utf8', end: 64 * 1024 });
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    input.destroy();
    return parseLine(text);
  }
  return undefined;
}

/** a line as written: JSON of masked(l), serialized once when it can hold no secret (mayHoldSecret) */
function lineText(l: Line): string {
  const text = JSON.stringify(l);
  return (mayHoldSecret(text, 'c' in l ? l.c.feed : l.r.feed) ? JSON.stringify(masked(l)) : text) + '\n';
}

/** the line's values masked of secrets; a packed whole listing (compressed bytes, undo) as it is */
function masked(l: Line): Line {
  if (!('c' in l) || !('before' in l.c.change) || l.c.change.before === undefined)
    return maskDeep(l, 'c' in l ? l.c.feed : l.r.feed);
  const { before, ...change } = l.c.change;
  const m = maskDeep({ c: { ...l.c, change } }, l.c.feed);
  return { c: { ...m.c, change: { ...m.c.change, before } as ChangeEntry['change'] } };
}

function atOf(l: Line): string | undefined {
  return 'c' in l ? l.c.at : l.r.finishedAt;
}

function parseLine(text: string): Line | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && ('c' in v || 'r' in v)) return v as Line;
  } catch {
    // a torn last line (a crash mid-append) is skipped
  }
  return undefined;
}
