// A CSV record kept as its text (rowText's joined form), its data built only when asked for: a
// rerun's record whose stamp matches is never mapped, so its data is never built, and all it holds
// meanwhile is one string (no object of a property a column, no field strings that keep the chunk
// they were cut from). The reader hands these on when told its records will mostly not be mapped
// (readCsv's `lazy`; the same items as the records it builds as it reads, by property test), and
// the feed thread's records are these too (sync/read/feed-thread.ts ThreadRecord).
import type { RecordPosition } from '../types.js';

/** the joined form's separator (rowText) */
export const UNIT = '\u001f';

/** What the records of one header share: the builder of their data, and each column's place. */
export class RowShape {
  /** the record object of a row's fields */
  readonly build: (fields: string[]) => Record<string, string>;
  readonly #columns: ReadonlyMap<string, number>;
  constructor(readonly header: readonly string[]) {
    this.build = recordBuilder(header);
    this.#columns = new Map(header.map((name, i) => [name, i]));
  }
  /** the place of column `name` in the header (undefined: no such column) */
  columnOf(name: string): number | undefined {
    return this.#columns.get(name);
  }
}

/**
 * A record whose text is rowText's joined form (`c`): the data is the shape's record object of the
 * text's fields (rowFields), built on first use; a column's value can be read from the text alone.
 */
export class CsvRecord {
  readonly kind = 'record';
  #data: Record<string, string> | undefined;
  readonly #shape: RowShape;
  constructor(
    readonly position: RecordPosition,
    readonly text: string,
    shape: RowShape,
  ) {
    this.#shape = shape;
  }
  get data(): Record<string, string> {
    if (this.#data) return this.#data;
    const fields = rowFields(this.text);
    if (!fields)
      throw new Error(`${this.position.file}:${this.position.line}: a CSV record whose text is not the joined form`);
    return (this.#data = this.#shape.build(fields));
  }
  /** the value `data[name]` holds, read from the text without building the data; undefined when the header has no such column */
  column(name: string): string | undefined {
    const i = this.#shape.columnOf(name);
    if (i === undefined) return undefined;
    const t = this.text;
    // the header's identity, then a separator before each field
    let at = t.indexOf(UNIT);
    for (let k = 0; k < i && at >= 0; k++) at = t.indexOf(UNIT, at + 1);
    if (at < 0)
      throw new Error(
        `${this.position.file}:${this.position.line}: a CSV record whose text has fewer fields than its header`,
      );
    const end = t.indexOf(UNIT, at + 1);
    return t.slice(at + 1, end < 0 ? t.length : end);
  }
}

/**
 * A row's text (FeedItem.text): the header's identity and the row's fields, which together make its
 * data. Joined by the unit separator when no field holds one (one join, no escaping: cut at its
 * separators, the text gives the fields back), else as JSON; the first character tells the two apart.
 * `noUnit`: the caller vouches that no field holds the separator (csv-scan.ts: the text its fields
 * were cut from holds none), so the fields need not be looked through.
 */
export function rowText(headerId: string, fields: readonly string[], noUnit = false): string {
  // (no fields joins as one empty field does)
  if (fields.length === 0) return `C${headerId}[]`;
  // (a rerun takes every row's text: looking through a 22-field row's fields was 0.3 µs of its 0.9 µs here)
  if (!noUnit) for (const f of fields) if (f.includes(UNIT)) return `C${headerId}${JSON.stringify(fields)}`;
  return `c${headerId}${UNIT}${fields.join(UNIT)}`;
}

/**
 * The fields a row's text holds (rowText the other way round), when it is the joined form (`c`);
 * undefined for the JSON form, which is rare (a field holding the unit separator, or no fields).
 */
export function rowFields(text: string): string[] | undefined {
  if (text.charCodeAt(0) !== 0x63 /* c */) return undefined;
  const at = text.indexOf(UNIT);
  return at < 0 ? undefined : text.slice(at + 1).split(UNIT);
}

/**
 * fields → record object. Generated as one object literal from the header, so every record of the
 * feed shares one hidden class with in-object properties, and the mapping's property reads stay
 * monomorphic (a record built key by key ends up a dictionary: several times slower to read).
 * Keys are JSON-quoted; a header naming __proto__ takes the plain loop (a literal would set the prototype).
 */
function recordBuilder(header: readonly string[]): (fields: string[]) => Record<string, string> {
  if (header.includes('__proto__')) {
    return (fields) => {
      const data: Record<string, string> = Object.create(null);
      for (let i = 0; i < header.length; i++) data[header[i]!] = fields[i]!;
      return data;
    };
  }
  const body = header.map((h, i) => `${JSON.stringify(h)}: f[${i}]`).join(', ');
  return new Function('f', `return { ${body} };`) as (fields: string[]) => Record<string, string>;
}
