// Routing a source record (feeds[].chatbots[].where): each named field, a dotted path as mapping
// rules read it, must hold one of the listed values, compared as `map` compares lookups (case,
// spaces, underscores and hyphens aside: foldLookup). A field holding a list matches when one of
// its values does. Several fields must all match; no `where` takes every record.
import { foldLookup } from './lookup.js';
import { compilePath } from './paths.js';

export type Where = Readonly<Record<string, ReadonlyArray<string | number | boolean>>>;

/** Whether a source record goes this way. */
export type RecordRoute = (record: Record<string, unknown>) => boolean;

export function compileWhere(where: Where | undefined): RecordRoute | undefined {
  const tests = Object.entries(where ?? {}).map(([path, values]) => {
    const read = compilePath(path);
    const wanted = new Set(values.map(foldLookup));
    return (record: Record<string, unknown>) => {
      const v = read(record);
      if (v === undefined || v === null) return false;
      return Array.isArray(v) ? v.some((x) => wanted.has(foldLookup(x))) : wanted.has(foldLookup(v));
    };
  });
  if (tests.length === 0) return undefined;
  return (record) => tests.every((t) => t(record));
}
