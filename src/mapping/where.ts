// Routing a source record (feeds[].chatbots[].where): each named field, a dotted path as mapping
// rules read it, must hold one of the listed values, compared as `map` compares lookups (case,
// spaces, underscores and hyphens aside: foldLookup). A field holding a list matches when one of
// its values does. Several fields must all match; no `where` takes every record.
import { foldLookup } from './lookup.js';
import { compilePath } from './paths.js';

export type Where = Readonly<Record<string, ReadonlyArray<string | number | boolean>>>;

/** One field of a `where`: its path and the folded values it takes. */
export interface WhereTest {
  path: string;
  wanted: ReadonlySet<string>;
}

/** Whether a source record goes this way; `tests`: what it checks (every one must hold), for routeIndex. */
export type RecordRoute = ((record: Record<string, unknown>) => boolean) & { readonly tests?: readonly WhereTest[] };

export function compileWhere(where: Where | undefined): RecordRoute | undefined {
  const tests: WhereTest[] = Object.entries(where ?? {}).map(([path, values]) => ({
    path,
    wanted: new Set(values.map(foldLookup)),
  }));
  if (tests.length === 0) return undefined;
  const checks = tests.map(({ path, wanted }) => {
    const read = compilePath(path);
    return (record: Record<string, unknown>) => foldedValues(read(record)).some((v) => wanted.has(v));
  });
  return Object.assign((record: Record<string, unknown>) => checks.every((t) => t(record)), { tests });
}

/**
 * Many routes at once (a feed routed to many chatbots): the indexes of the routes a record takes,
 * in order (an undefined route takes every record), as each route alone answers (by the property
 * test). Each field is read and folded once a record, not once a route, and the routes are found
 * by the value of their first field (an index of its values), their other fields then checked: a
 * feed routed by office to 100 chatbots folded each record's office 100 times. A route without
 * `tests` (one made elsewhere than compileWhere) is asked itself, for every record.
 */
export function routeIndex(
  routes: ReadonlyArray<RecordRoute | undefined>,
): (record: Record<string, unknown>) => number[] {
  const asked: number[] = [];
  const readers = new Map<string, (record: Record<string, unknown>) => unknown>();
  /** by a route's first field: its folded values → the routes */
  const byFirst = new Map<string, Map<string, number[]>>();
  const others: Array<readonly WhereTest[]> = [];
  routes.forEach((route, i) => {
    const [first, ...rest] = route?.tests ?? [];
    if (!route || !first) return void asked.push(i);
    for (const t of route.tests!) if (!readers.has(t.path)) readers.set(t.path, compilePath(t.path));
    let index = byFirst.get(first.path);
    if (!index) byFirst.set(first.path, (index = new Map()));
    for (const v of first.wanted) {
      const at = index.get(v);
      if (at) at.push(i);
      else index.set(v, [i]);
    }
    others[i] = rest;
  });
  return (record) => {
    const folded = new Map<string, readonly string[]>();
    const valuesOf = (path: string): readonly string[] => {
      let vs = folded.get(path);
      if (vs === undefined) folded.set(path, (vs = foldedValues(readers.get(path)!(record))));
      return vs;
    };
    const takes = (t: WhereTest) => valuesOf(t.path).some((v) => t.wanted.has(v));
    const out = asked.filter((i) => !routes[i] || routes[i](record));
    for (const [path, index] of byFirst)
      for (const v of valuesOf(path))
        for (const i of index.get(v) ?? []) if (others[i]!.every(takes) && !out.includes(i)) out.push(i);
    return out.length > 1 ? out.sort((a, b) => a - b) : out;
  };
}

/** The values a `where` field compares of what a record holds there: none, each of a list, or the one, folded. */
function foldedValues(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v.map(foldLookup) : [foldLookup(v)];
}
