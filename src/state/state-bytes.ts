// The state file's contents as its bytes and where each namespace lies in them: a namespace is
// parsed on first use only (a run reads a feed's fingerprints and stamps in bulk, its `unlisted:`
// namespace a few keys at a time or not at all, and a million entries parse in about a second),
// and a write serializes only the namespaces it changes, copying the others' bytes as they are.
import { scanMembers, type ValueRange } from './json-namespaces.js';
import type { StateChange } from './kv-store.js';

/** A namespace as read: never changed in place (a write copies the ones it changes). */
export type Namespace = Readonly<Record<string, string>>;

/** What makes bytes unusable as a state file, and at which byte. */
export interface StateProblem {
  readonly offset: number;
  readonly problem: string;
  /** the bytes are JSON, of another shape than a state file's */
  readonly json: boolean;
}

export class StateBytes {
  /** the namespaces parsed so far (by JSON.parse of their range, or as a write made them) */
  readonly #parsed: Map<string, Namespace>;

  private constructor(
    readonly bytes: Buffer,
    readonly ranges: ReadonlyMap<string, ValueRange>,
    parsed: Map<string, Namespace>,
  ) {
    this.#parsed = parsed;
  }

  /** No file yet. */
  static empty(): StateBytes {
    return new StateBytes(Buffer.from('{}'), new Map(), new Map());
  }

  /** The file's bytes checked whole (JSON.parse's verdict), each namespace an object of strings; nothing parsed yet. */
  static read(bytes: Buffer): StateBytes | StateProblem {
    const scan = scanMembers(bytes);
    if (!scan.ok) return { offset: scan.offset, problem: scan.problem, json: false };
    for (const [ns, range] of scan.members) {
      // feedsync writes nothing else; JSON.parse's verdict alone would let a hand edit through that
      // reads back as nonsense (a string's characters as keys) or values typed wrong
      if (!range.stringsOnly) return { offset: range.start, problem: `the value of ${JSON.stringify(ns)} is not an object of strings`, json: true };
    }
    return new StateBytes(bytes, scan.members, new Map());
  }

  /** The namespace's entries, parsed on first use; undefined when the file has none. */
  namespace(ns: string): Namespace | undefined {
    let space = this.#parsed.get(ns);
    if (space === undefined) {
      const range = this.ranges.get(ns);
      if (range === undefined) return undefined;
      // read() checked that the range is an object whose every value is a string
      space = JSON.parse(this.bytes.toString('utf8', range.start, range.end)) as Namespace;
      this.#parsed.set(ns, space);
    }
    return space;
  }

  /**
   * The state with `changes` applied: the namespaces they change copied and changed (null-prototype:
   * a key "__proto__" is a key like any other), the rest kept as their bytes and parsed objects.
   * A namespace is copied on its first real change only: a lane commits each namespace it keeps,
   * on a rerun mostly with nothing in it, and a namespace not yet read is then not even parsed.
   */
  changed(changes: readonly StateChange[]): StateBytes {
    const spaces = new Map<string, Record<string, string>>();
    const current = (ns: string) => spaces.get(ns) ?? this.namespace(ns);
    const writable = (ns: string): Record<string, string> => {
      const m: Record<string, string> = spaces.get(ns) ?? Object.assign(Object.create(null), this.namespace(ns));
      spaces.set(ns, m);
      return m;
    };
    for (const c of changes) {
      if (!this.ranges.has(c.ns)) writable(c.ns); // a namespace named is in the file from then on, if only as {}
      for (const [k, v] of c.set ?? []) if (ownValue(current(c.ns), k) !== v) writable(c.ns)[k] = v;
      for (const k of c.delete ?? []) if (ownValue(current(c.ns), k) !== undefined) delete writable(c.ns)[k];
    }
    if (spaces.size === 0) return this;
    const parsed = new Map(this.#parsed);
    for (const [ns, m] of spaces) parsed.set(ns, m);
    const { bytes, ranges } = this.#assembled(spaces);
    return new StateBytes(bytes, ranges, parsed);
  }

  /** The file from pieces: a changed namespace's JSON, every other one's bytes verbatim (never one string of the whole). */
  #assembled(changed: ReadonlyMap<string, Namespace>): { bytes: Buffer; ranges: Map<string, ValueRange> } {
    const pieces: Buffer[] = [];
    const ranges = new Map<string, ValueRange>();
    let length = 0;
    const put = (ns: string, value: Buffer) => {
      const name = Buffer.from((length === 0 ? '{' : ',') + JSON.stringify(ns) + ':');
      const start = length + name.length;
      pieces.push(name, value);
      length = start + value.length;
      ranges.set(ns, { start, end: length, stringsOnly: true });
    };
    const json = (space: Namespace) => Buffer.from(JSON.stringify(space));
    for (const [ns, range] of this.ranges) {
      const space = changed.get(ns);
      put(ns, space === undefined ? this.bytes.subarray(range.start, range.end) : json(space));
    }
    for (const [ns, space] of changed) if (!this.ranges.has(ns)) put(ns, json(space));
    const end = Buffer.from(length === 0 ? '{}' : '}');
    pieces.push(end);
    return { bytes: Buffer.concat(pieces, length + end.length), ranges };
  }
}

/**
 * A key's value, never one inherited from Object.prototype (a key may be any string): values are
 * strings, and nothing Object.prototype holds is one, so one lookup tells (a rerun makes 100k).
 */
export function ownValue(space: Namespace | undefined, key: string): string | undefined {
  const value: unknown = space?.[key];
  return typeof value === 'string' ? value : undefined;
}
