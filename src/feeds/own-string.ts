// Strings that do not keep the text they were cut from. V8 makes a slice of 13 characters or more
// a view of its parent string: a field a reader cut from its chunk of the file (csv-scan.ts, 256 KB
// of text; xml-scanner.ts), or from a CSV record's text, pins that whole text for as long as the
// field is kept. A reader's records are let go a batch at a time, so that costs nothing while they
// flow; what the sync keeps of them past their batch pins a chunk each, and a few thousand such
// the whole file: the listing keys a run keeps for every listing (a URL key; mapping/compile.ts
// keyOf, keyOfText), the change log recorder's buffered changes (a rerun whose records are mapped,
// few of them changed: change-log/recorder.ts), the XML scanner's values.

/** A copy of `s` that keeps no parent string alive (a cons string sliced is flattened first, into a string of its own). */
export function ownString(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

/**
 * Every string of a record's data or a change (and of the object literals and arrays in it)
 * replaced by its own copy (ownString), in place: equal values, the same keys in the same order,
 * the same prototype, so it reads as before (a record's mapping, its stamp's text; a change as
 * logged) while it keeps only its own text. Returns `data`.
 */
export function ownStrings<T extends object>(data: T): T {
  if (Array.isArray(data)) for (let i = 0; i < data.length; i++) data[i] = owned(data[i]);
  else for (const k of Object.keys(data)) Reflect.set(data, k, owned(Reflect.get(data, k)));
  return data;
}

function owned(v: unknown): unknown {
  if (typeof v === 'string') return ownString(v);
  if (typeof v === 'object' && v !== null && (Array.isArray(v) || isPlain(v))) ownStrings(v);
  return v;
}

/** an object literal's kind (or a null-prototype record): not a Date, a Buffer or a class's instance */
function isPlain(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
