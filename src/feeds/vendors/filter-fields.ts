// The field names an OData `$filter` compares or passes to a function, outside string literals:
// `OriginatingSystemName eq 'actris' and contains(City,'x')` → OriginatingSystemName, City. Pure.
const KEYWORDS = new Set([
  'and',
  'or',
  'not',
  'eq',
  'ne',
  'gt',
  'ge',
  'lt',
  'le',
  'has',
  'in',
  'true',
  'false',
  'null',
]);

export function filterFields(filter: string): string[] {
  const bare = filter.replace(/'(?:[^']|'')*'/g, "''");
  const fields = new Set<string>();
  for (const m of bare.matchAll(/\b([A-Za-z_][A-Za-z0-9_/]*)\s+(?:eq|ne|gt|ge|lt|le|has|in)\b/g)) fields.add(m[1]!);
  for (const m of bare.matchAll(
    /\b(?:contains|startswith|endswith|tolower|toupper|trim|length|year|month|day|date)\(\s*([A-Za-z_][A-Za-z0-9_/]*)/g,
  ))
    fields.add(m[1]!);
  return [...fields].filter((f) => !KEYWORDS.has(f));
}
