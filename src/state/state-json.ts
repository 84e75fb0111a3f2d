// The state as one JSON document, `{ "<namespace>": { "<key>": "<value>", … }, … }`: what
// `feedsync state export` writes and `state import` reads, and the format of the former state file
// (`state.json`, imported once: legacy-state.ts).
import { EnvironmentError } from '../errors.js';

/** Namespace → its entries, as the document holds them. */
export type StateDocument = Map<string, Array<[string, string]>>;

/** The document's namespaces; an error naming `source` when it is not JSON or not of that shape. */
export function parseStateJson(text: string, source: string, remedy: string): StateDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new EnvironmentError(
      source,
      `is not valid JSON (${(err as Error).message}; ${text.length} characters): it was cut short or edited by hand`,
      remedy,
      { cause: err },
    );
  }
  if (!isObject(doc))
    throw new EnvironmentError(
      source,
      'is JSON but not feedsync state (the state is one object of namespaces)',
      remedy,
    );
  const state: StateDocument = new Map();
  // (Object.entries: JSON.parse makes every member an own property, "__proto__" too)
  for (const [ns, entries] of Object.entries(doc)) {
    if (!isObject(entries))
      throw new EnvironmentError(
        source,
        `is JSON but not feedsync state (the value of ${JSON.stringify(ns)} is not an object)`,
        remedy,
      );
    const pairs: Array<[string, string]> = [];
    for (const [key, value] of Object.entries(entries)) {
      if (typeof value !== 'string')
        throw new EnvironmentError(
          source,
          `is JSON but not feedsync state (${JSON.stringify(ns)} → ${JSON.stringify(key)} is not a string)`,
          remedy,
        );
      pairs.push([key, value]);
    }
    state.set(ns, pairs);
  }
  return state;
}

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
