// The names source.related may give: the built-in related resources and those added
// (related-resources.ts addRelatedResource). Apart from the resources themselves, whose openers take
// the source's config: the config's schema asks only whether a name is known, and imports this.
/** The related resources built in (reso-roster.ts, reso-open-houses.ts). */
export const BUILT_IN_RELATED = ['Member', 'Office', 'OpenHouse'] as const;

const addedNames = new Set<string>();

/** A name source.related may give from now on (related-resources.ts addRelatedResource). */
export function addRelatedName(name: string): void {
  if (isRelatedResource(name)) throw new Error(`related resource ${name} is known already`);
  addedNames.add(name);
}

/** Whether source.related may name it. */
export function isRelatedResource(name: string): boolean {
  return (BUILT_IN_RELATED as readonly string[]).includes(name) || addedNames.has(name);
}

/** The names source.related may give, for the config's message. */
export function relatedNames(): string[] {
  return [...BUILT_IN_RELATED, ...addedNames];
}
