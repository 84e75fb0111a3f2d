// The state file's contents as its bytes and where each namespace lies in them. A namespace is
// never parsed into an object: it is indexed on first use (namespace-index.ts) and read from its
// bytes, whole (a run reads a feed's fingerprints and stamps: namespace-entries.ts) or one key at a
// time (its `unlisted:` namespace, a few keys or none); a write merges the bytes of the namespaces
// it changes with the changes, and copies the others' bytes as they are.
import { scanMembers, type ValueRange } from './json-namespaces.js';
import { NamespaceEntries } from './namespace-entries.js';
import { NamespaceIndex } from './namespace-index.js';
import { byNamespace, effectsOf, merged, type Effects, type MergedNamespace } from './namespace-merge.js';
import type { StateChange } from './kv-store.js';

/** What makes bytes unusable as a state file, and at which byte. */
export interface StateProblem {
  readonly offset: number;
  readonly problem: string;
  /** the bytes are JSON, of another shape than a state file's */
  readonly json: boolean;
}

export class StateBytes {
  /** the namespaces indexed so far (offsets within their range, so they hold wherever a later file puts them) */
  readonly #indexed: Map<string, NamespaceIndex>;

  private constructor(
    readonly bytes: Buffer,
    readonly ranges: ReadonlyMap<string, ValueRange>,
    indexed: Map<string, NamespaceIndex>,
  ) {
    this.#indexed = indexed;
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

  /** The namespace's entries, read from its bytes (indexed on first use); undefined when the file has none. */
  entries(ns: string): NamespaceEntries | undefined {
    const bytes = this.#bytesOf(ns);
    return bytes === undefined ? undefined : new NamespaceEntries(bytes, this.#index(ns, bytes));
  }

  /** One key's value, from the namespace's bytes through its index. */
  value(ns: string, key: string): string | undefined {
    return this.entries(ns)?.get(key);
  }

  /**
   * The state with `changes` applied: a changed namespace's bytes merged from its old bytes and the
   * changes (namespace-merge.ts), the rest kept as their bytes. A namespace whose changes leave it
   * as it was (a rerun's commit names each namespace a lane keeps, mostly with nothing in it) is
   * kept as it is, and one not yet read is then not even indexed.
   */
  changed(changes: readonly StateChange[]): StateBytes {
    const spaces = new Map<string, MergedNamespace>();
    const indexed = new Map(this.#indexed);
    for (const [ns, group] of byNamespace(changes)) {
      const effects = effectsOf(group);
      const bytes = this.#bytesOf(ns);
      if (bytes !== undefined && !this.#changes(ns, effects)) continue;
      const space = merged(bytes === undefined ? undefined : { bytes, index: this.#index(ns, bytes) }, effects);
      spaces.set(ns, space);
      indexed.delete(ns);
    }
    if (spaces.size === 0) return this;
    const { bytes, ranges } = this.#assembled(spaces);
    return new StateBytes(bytes, ranges, indexed);
  }

  /** Whether the effects change the namespace (a set to another value, or a delete of a key it has). */
  #changes(ns: string, effects: Effects): boolean {
    for (const [k, v] of effects) if (this.value(ns, k) !== v) return true;
    return false;
  }

  #bytesOf(ns: string): Buffer | undefined {
    const range = this.ranges.get(ns);
    return range === undefined ? undefined : this.bytes.subarray(range.start, range.end);
  }

  #index(ns: string, bytes: Buffer): NamespaceIndex {
    let index = this.#indexed.get(ns);
    if (index === undefined) {
      index = NamespaceIndex.of(bytes);
      this.#indexed.set(ns, index);
    }
    return index;
  }

  /** The file from pieces: a changed namespace's merged pieces, every other one's bytes verbatim (never one string of the whole). */
  #assembled(changed: ReadonlyMap<string, MergedNamespace>): { bytes: Buffer; ranges: Map<string, ValueRange> } {
    const pieces: Buffer[] = [];
    const ranges = new Map<string, ValueRange>();
    let length = 0;
    const put = (ns: string, value: readonly Buffer[], valueLength: number) => {
      const name = Buffer.from((length === 0 ? '{' : ',') + JSON.stringify(ns) + ':');
      const start = length + name.length;
      pieces.push(name, ...value);
      length = start + valueLength;
      ranges.set(ns, { start, end: length, stringsOnly: true });
    };
    for (const [ns, range] of this.ranges) {
      const space = changed.get(ns);
      if (space === undefined) put(ns, [this.bytes.subarray(range.start, range.end)], range.end - range.start);
      else put(ns, space.pieces, space.length);
    }
    for (const [ns, space] of changed) if (!this.ranges.has(ns)) put(ns, space.pieces, space.length);
    const end = Buffer.from(length === 0 ? '{}' : '}');
    pieces.push(end);
    return { bytes: Buffer.concat(pieces, length + end.length), ranges };
  }
}
