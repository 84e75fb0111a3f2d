// The keys a config schema accepts, read from the zod schema itself: for "did you mean …?" on a
// typo'd key, the allowed values of an enum or a `kind`, and the configuration reference's table
// (docs/configuration.md, by test).
import type { z } from 'zod';

type Def = { type: string; [k: string]: unknown };
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/** The schema under optional / default / prefault / nullable / readonly / catch / preprocess wrappers. */
export function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const def = defOf(s);
    if (['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional'].includes(def.type)) {
      s = def.innerType as z.ZodType;
    } else if (def.type === 'pipe') {
      // z.preprocess(fn, schema) is pipe(transform, schema); x.transform(fn) is pipe(x, transform)
      const out = def.out as z.ZodType;
      s = defOf(out).type === 'transform' ? (def.in as z.ZodType) : out;
    } else if (def.type === 'lazy') {
      s = (def.getter as () => z.ZodType)();
    } else {
      return s;
    }
  }
}

/** The object shapes a value at this schema may take (several for a union of objects). */
function shapes(schema: z.ZodType): Array<Record<string, z.ZodType>> {
  const s = unwrap(schema);
  const def = defOf(s);
  if (def.type === 'object') return [def.shape as Record<string, z.ZodType>];
  if (def.type === 'union') return (def.options as z.ZodType[]).flatMap(shapes);
  if (def.type === 'intersection') return [...shapes(def.left as z.ZodType), ...shapes(def.right as z.ZodType)];
  return [];
}

/** The schema found at `path` (array indexes step into the element), or undefined. */
function schemaAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): z.ZodType | undefined {
  let cur: z.ZodType | undefined = schema;
  for (const key of path) {
    if (!cur) return undefined;
    const s = unwrap(cur);
    const def = defOf(s);
    if (typeof key === 'number') {
      cur = def.type === 'array' ? (def.element as z.ZodType) : undefined;
    } else if (def.type === 'record') {
      cur = def.valueType as z.ZodType;
    } else {
      cur = shapes(s)
        .map((shape) => shape[String(key)])
        .find(Boolean);
    }
  }
  return cur;
}

/** The keys an object at `path` accepts (the union of every variant's keys). */
export function keysAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): string[] {
  const at = schemaAt(schema, path);
  return at ? [...new Set(shapes(at).flatMap((shape) => Object.keys(shape)))] : [];
}

export interface SchemaKey {
  /** e.g. `feeds[].deletes.maxFraction` */
  path: string;
  /** the default, when the key has one that is a plain value */
  default?: string | number | boolean;
}

/**
 * Every key a config may hold, as the configuration reference names them (`feeds[].source.kind`). The walk goes into
 * objects and arrays of objects; a record (`headers`, `mapping.fields`) and the keys under `stop`
 * are one entry each, documented as a whole.
 */
export function schemaKeys(schema: z.ZodType, stop: ReadonlySet<string> = new Set()): SchemaKey[] {
  const out: SchemaKey[] = [];
  const walk = (s: z.ZodType, path: string) => {
    const inner = unwrap(s);
    const def = defOf(inner);
    const variants =
      path && stop.has(path) ? [] : def.type === 'array' ? shapes(def.element as z.ZodType) : shapes(inner);
    if (!variants.length) {
      if (path) out.push({ path, ...defaultOf(s) });
      return;
    }
    const base = def.type === 'array' ? `${path}[]` : path;
    const seen = new Map<string, z.ZodType>();
    for (const shape of variants) for (const [k, v] of Object.entries(shape)) if (!seen.has(k)) seen.set(k, v);
    for (const [k, v] of seen) walk(v, base ? `${base}.${k}` : k);
  };
  walk(schema, '');
  return out;
}

function defaultOf(schema: z.ZodType): { default?: string | number | boolean } {
  let s = schema;
  for (;;) {
    const def = defOf(s);
    if (def.type === 'default') {
      const v = typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
      return ['string', 'number', 'boolean'].includes(typeof v) ? { default: v as string | number | boolean } : {};
    }
    if (['optional', 'nullable', 'readonly', 'prefault'].includes(def.type)) s = def.innerType as z.ZodType;
    else return {};
  }
}
