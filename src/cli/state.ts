// `feedsync state export [FILE]` and `feedsync state import [FILE]`: the state store of runs without
// Redis (state.file, `.feedsync/state.lmdb`) as one JSON document (src/state/state-json.ts), written
// to stdout or FILE, read from stdin or FILE. Import replaces the whole state in one transaction;
// export, edit, import is how a person changes it (the store's file is not text).
import { createWriteStream } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { text } from 'node:stream/consumers';
import type { Writable } from 'node:stream';
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { createFileStore, type FileStore } from '../state/file-store.js';
import { OPEN_WAIT_MS, openWaitNotice } from '../state/open-lock.js';
import { stateFile } from '../state/paths.js';
import { parseStateJson, placeIn, writeStateJson, type TextPlace } from '../state/state-json.js';
import { EXIT } from './exit.js';

export interface StateOptions {
  config: string;
  action: 'export' | 'import';
  /** FILE, or undefined / '-' for stdout or stdin */
  file?: string;
  /** false with --no-redis */
  redis?: boolean;
}

export async function run(opts: StateOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  if (loaded.config.redis && opts.redis !== false) {
    throw new ConfigError(
      `state ${opts.action}: this config keeps its state in Redis; export and import work on the state file of runs without Redis (${stateFile(loaded)}): add --no-redis to work on it`,
    );
  }
  const path = stateFile(loaded);
  const store = await createFileStore(path, {
    // said at once: beside a running sync it waits for the sync to end
    onWait: (holder) =>
      process.stderr.write(`feedsync: ${openWaitNotice(path, holder, OPEN_WAIT_MS, 'the default')}\n`),
  });
  try {
    if (opts.action === 'export') await exportTo(store, opts.file);
    else await importFrom(store, opts.file);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

const useStdio = (file: string | undefined): file is undefined => file === undefined || file === '-';

async function exportTo(store: FileStore, file: string | undefined): Promise<void> {
  const namespaces = store.namespaces();
  const document = namespaces.map(([ns]) => [ns, store.entries(ns)] as const);
  if (useStdio(file)) {
    await writeStateJson(document, (piece) => written(process.stdout, piece));
  } else {
    // a file is replaced when the whole document is in it, never left half written
    const partial = `${file}.partial`;
    const out = createWriteStream(partial);
    try {
      await writeStateJson(document, (piece) => written(out, piece));
      out.end();
      await once(out, 'finish');
      await rename(partial, file);
    } catch (err) {
      out.destroy();
      await rm(partial, { force: true });
      throw err;
    }
  }
  const entries = namespaces.reduce((n, [, size]) => n + size, 0);
  process.stderr.write(
    `exported ${namespaces.length} namespaces, ${entries} entries from ${store.location}${useStdio(file) ? '' : ` to ${file}`}\n`,
  );
}

/** `piece` handed to the stream, waiting while it is full. */
async function written(out: Writable, piece: string): Promise<void> {
  if (!out.write(piece)) await once(out, 'drain');
}

/** FILE's text; FILE missing or a folder is the command line's fault (relative to the current folder, not to the config as config paths are). */
async function readDocument(file: string): Promise<string> {
  const remedy = 'Give the path of a document `feedsync state export` wrote; nothing was imported';
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw inputError(
        `The state document ${file}`,
        `does not exist (looked for ${resolve(file)}; FILE is relative to the current folder)`,
        remedy,
      );
    if (code === 'EISDIR') throw inputError(`The state document ${file}`, 'is a folder, not a file', remedy);
    throw err;
  }
}

/**
 * The document to import is the command's input: one that is missing, not JSON or not the state's
 * shape is a usage error (exit 2, as a config's), said as `source problem. remedy.`; nothing is imported.
 */
const inputError = (source: string, problem: string, remedy: string) =>
  new ConfigError(`${source} ${problem}. ${remedy}.`);

async function importFrom(store: FileStore, file: string | undefined): Promise<void> {
  const json = useStdio(file) ? await text(process.stdin) : await readDocument(file);
  // a place in a file as FILE:LINE:COLUMN, for an editor to open; on stdin in words (there is no file)
  const source = (at?: TextPlace) =>
    useStdio(file)
      ? `The state document on stdin${at ? ` (line ${at.line}, column ${at.column})` : ''}`
      : `The state document ${placeIn(file, at)}`;
  const state = parseStateJson(json, (problem, _cause, at) =>
    inputError(source(at), problem, 'Export the state (feedsync state export), edit that document and import it again'),
  );
  await store.replace(state);
  const entries = [...state.values()].reduce((n, pairs) => n + pairs.length, 0);
  process.stderr.write(
    `imported ${state.size} namespaces, ${entries} entries into ${store.location} (the state it held before is replaced)\n`,
  );
}
