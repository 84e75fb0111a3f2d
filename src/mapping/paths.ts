// Reading a value out of a raw record by a dotted path: `Location.StreetAddress`, `@_id` attributes,
// `Pictures.Picture.PictureUrl` across repeated elements (collected into a list). Paths are compiled
// once per mapping so the per-record work is a few property reads.

export type Getter = (record: Record<string, unknown>) => unknown;

/** fast-xml-parser puts the text of an element that also has attributes under this name. */
const TEXT_KEY = '#text';

/**
 * A getter for `path`. `fastPath: false` gives the reference walk alone, the rule the fast getter
 * of a nested path is tested against (test/mapping/paths.test.ts).
 */
export function compilePath(path: string, how: { fastPath?: boolean } = {}): Getter {
  const segments = path.split('.');
  if (segments.length === 1) {
    const read = propertyReader(path);
    return (record) => {
      const v = read(record);
      return v === undefined ? unwrap(byLocalName(record, path)) : typeof v === 'string' ? v : unwrap(v);
    };
  }
  const walk: Getter = (record) => {
    // a CSV header may itself contain dots
    if (path in record) return unwrap(record[path]);
    let value: unknown = record;
    for (const seg of segments) {
      value = step(value, seg);
      if (value === undefined) return undefined;
    }
    return unwrap(value);
  };
  return how.fastPath === false ? walk : nestedReader(path, segments, walk);
}

/**
 * `Location.City` as code of its own, for the usual record: each step a plain object holding the
 * exact name, the last one text. Like propertyReader, every read is then at a site that sees one
 * name; anything else (a list, a prefixed or missing name, a `#text` object) is left to `walk`.
 */
function nestedReader(path: string, segments: string[], walk: Getter): Getter {
  const isObject = (v: string) => `typeof ${v} === 'object' && ${v} !== null && !Array.isArray(${v})`;
  let body = 'const v0 = record;\n';
  segments.forEach((seg, i) => {
    if (i > 0) body += `if (!(${isObject(`v${i}`)})) return walk(record);\n`;
    body += `const v${i + 1} = v${i}[${JSON.stringify(seg)}];\n`;
  });
  body += `return typeof v${segments.length} === 'string' && !(${JSON.stringify(path)} in record) ? v${segments.length} : walk(record);`;
  const make = new Function('walk', `return (record) => {\n${body}\n};`) as (walk: Getter) => Getter;
  return make(walk);
}

/**
 * `record => record["Beds"]` as code of its own: each rule then reads one property name at one call
 * site (a monomorphic load V8 caches), where a shared `record[name]` site would see every column name
 * and fall back to a dictionary lookup. This is the hot path of a 200k-record feed.
 */
function propertyReader(name: string): (record: Record<string, unknown>) => unknown {
  return new Function('record', `return record[${JSON.stringify(name)}];`) as (
    record: Record<string, unknown>,
  ) => unknown;
}

function step(value: unknown, seg: string): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) {
      const s = step(v, seg);
      if (Array.isArray(s)) out.push(...s);
      else if (s !== undefined) out.push(s);
    }
    return out.length ? out : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const obj = value as Record<string, unknown>;
  const v = obj[seg];
  return v !== undefined ? v : byLocalName(obj, seg);
}

/** XML feeds differ in namespace prefixes (commons:City vs City): match on the local name when the exact key is absent. */
function byLocalName(obj: Record<string, unknown>, seg: string): unknown {
  const local = seg.slice(seg.indexOf(':') + 1);
  for (const key in obj) {
    if (key === local || key.endsWith(`:${local}`)) return obj[key];
  }
  return undefined;
}

function unwrap(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrap);
  if (value !== null && typeof value === 'object' && TEXT_KEY in value)
    return (value as Record<string, unknown>)[TEXT_KEY];
  return value;
}

/** Empty for a mapping: absent, null, blank text, an empty list. */
export function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') {
    // most values have no surrounding blanks: decide without allocating a trimmed copy
    const n = value.length;
    if (n === 0) return true;
    if (value.charCodeAt(0) > 32 && value.charCodeAt(n - 1) > 32) return false;
    return value.trim() === '';
  }
  if (Array.isArray(value)) return value.every(isEmpty);
  return false;
}
