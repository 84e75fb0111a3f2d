// The related RESO resources a source may replicate beside its own (source.related), by name. The
// roster (Member, Office: reso-roster.ts) and the open houses (OpenHouse: reso-open-houses.ts) are
// built in; another is added here (addRelatedResource) and needs no edit in the sync: it is a layer
// over the opened feed that pulls its resource through the feed's page client (its requests counted
// under its name, in the source's budget), joins it to the records, asks for its own state and hands
// back what it learned (FeedContext.state, OpenedFeed.state), and fills its own report section
// (SourceReadStats.sections, its fields typed by declaration merging into SourceSections).
import type { ResoSource } from '../config-schema.js';
import type { FeedContext, OpenedFeed } from '../types.js';
import type { RequestTally } from './reso-requests.js';
import { addRelatedName } from './related-names.js';

export interface RelatedResource {
  /** its RESO resource name, as source.related names it */
  readonly name: string;
  /** the feed opened with it (the feed as it was when it has nothing to add: a reconcile, a replay) */
  open(feedName: string, source: ResoSource, ctx: FeedContext, inner: OpenedFeed, tally: RequestTally): OpenedFeed;
}

const added = new Map<string, RelatedResource>();

/** A related resource source.related may name from now on. */
export function addRelatedResource(resource: RelatedResource): void {
  addRelatedName(resource.name);
  added.set(resource.name, resource);
}

/** The feed with each added related resource the source names, in its order, over the built-in ones. */
export function withAddedRelated(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  inner: OpenedFeed,
  tally: RequestTally,
): OpenedFeed {
  let opened = inner;
  for (const name of source.related) {
    const resource = added.get(name);
    if (resource) opened = resource.open(feedName, source, ctx, opened, tally);
  }
  return opened;
}
