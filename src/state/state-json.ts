// The state as one JSON document, `{ "<namespace>": { "<key>": "<value>", … }, … }`: what
// `feedsync state export` writes and `state import` reads, and the format of the former state file
// (`state.json`, imported once: legacy-state.ts).
import { jsonErrorAt, lineColumn } from './json-error-at.js';

/** Namespace → its entries, as the document holds them. */
export type StateDocument = Map<string, Array<[string, string]>>;

/** Where in a document it stops being JSON: 1-based line and column, in characters. */
export interface TextPlace {
  line: number;
  column: number;
}

/**
 * The document's namespaces; `refuse(problem, cause, at)` when it is not JSON (`at`: where in it) or
 * not of that shape: the caller's error, which names the document (`placeIn`) and the remedy (an
 * import's input is a usage error, the state file on disk an environment one).
 */
export function parseStateJson(
  text: string,
  refuse: (problem: string, cause?: unknown, at?: TextPlace) => Error,
): StateDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const offset = jsonErrorAt(text);
    throw refuse(
      `is not valid JSON (${notJson(text, offset, err)}; ${text.length} characters): it was cut short or edited by hand`,
      err,
      offset === undefined ? undefined : lineColumn(text, offset),
    );
  }
  if (!isObject(doc)) throw refuse('is JSON but not feedsync state (the state is one object of namespaces)');
  const state: StateDocument = new Map();
  // (Object.entries: JSON.parse makes every member an own property, "__proto__" too)
  for (const [ns, entries] of Object.entries(doc)) {
    if (!isObject(entries))
      throw refuse(`is JSON but not feedsync state (the value of ${JSON.stringify(ns)} is not an object)`);
    const pairs: Array<[string, string]> = [];
    for (const [key, value] of Object.entries(entries)) {
      if (typeof value !== 'string')
        throw refuse(`is JSON but not feedsync state (${JSON.stringify(ns)} → ${JSON.stringify(key)} is not a string)`);
      pairs.push([key, value]);
    }
    state.set(ns, pairs);
  }
  return state;
}

/** What stands where a text JSON.parse refused stops being JSON (its words name no place for some faults). */
function notJson(text: string, offset: number | undefined, err: unknown): string {
  // (JSON.parse and the reading here disagree: its own words)
  if (offset === undefined) return err instanceof Error ? err.message : String(err);
  return offset >= text.length ? 'it ends there' : `${JSON.stringify(text[offset])} cannot stand there`;
}

/** A file and the place in it as editors and terminals open it, `FILE:LINE:COLUMN`; the file alone without a place. */
export const placeIn = (file: string, at: TextPlace | undefined): string =>
  at ? `${file}:${at.line}:${at.column}` : file;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The document, written namespace by namespace in pieces of about `chunk` characters (never one string of the whole). */
export async function writeStateJson(
  namespaces: Iterable<readonly [string, Iterable<readonly [string, string]>]>,
  write: (text: string) => Promise<void>,
  chunk = 1 << 16,
): Promise<void> {
  let piece = '{';
  let firstNs = true;
  for (const [ns, entries] of namespaces) {
    piece += `${firstNs ? '' : ','}\n${JSON.stringify(ns)}:{`;
    firstNs = false;
    let first = true;
    for (const [key, value] of entries) {
      piece += `${first ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(value)}`;
      first = false;
      if (piece.length >= chunk) {
        await write(piece);
        piece = '';
      }
    }
    piece += '}';
  }
  await write(piece + '\n}\n');
}
