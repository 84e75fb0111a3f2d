// Which listings Media events concern (RESO RCP-027 with the Data Dictionary's Media resource): an
// EntityEvent whose ResourceName is `Media` names a Media record by its key (`MediaKey`); the Media
// resource says which record it belongs to (its `ResourceName` and `ResourceRecordKey`). The Media
// records are asked by key (`$select` of those three fields only), batched within the URL limit as
// the confirmation is (reso-confirm.ts batches), 50 keys a request at most, nextLinks followed on
// the feed's origin within source.maxPages. A Media record no longer returned names no listing.
import { FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { batches } from './reso-confirm.js';
import type { PageClient } from './reso-pages.js';
import { keyLiteral, nextLinkUrl, queryUrl } from './reso-query.js';
import type { EventStats } from './reso-sections.js';

const MEDIA = 'Media';
const MEDIA_KEY = 'MediaKey';
/** most Media keys one request asks */
const MAX_TERMS = 50;

/** `keys` with the records these Media records belong to added; each added counted in `events.media`. */
export async function addMediaParents(
  keys: Set<string>,
  mediaKeys: readonly string[],
  at: { client: PageClient; source: ResoSource; label: string; events: EventStats },
): Promise<void> {
  if (!mediaKeys.length) return;
  for (const key of await mediaParents(at.client, at.source, mediaKeys, at.label)) {
    if (keys.has(key)) continue;
    keys.add(key);
    at.events.media = (at.events.media ?? 0) + 1;
  }
}

/** The keys of the feed's resource (source.resource) that these Media records belong to. */
async function mediaParents(
  client: PageClient,
  source: ResoSource,
  mediaKeys: readonly string[],
  label: string,
): Promise<Set<string>> {
  const parents = new Set<string>();
  const origin = new URL(source.url!).origin;
  const url = (field: string, values: string[]) =>
    queryUrl(source.url!, MEDIA, {
      filter: values.map((v) => `${field} eq ${keyLiteral(v)}`).join(' or '),
      select: [MEDIA_KEY, 'ResourceName', 'ResourceRecordKey'],
    });
  let pages = 0;
  for (const [field, values] of batches([{ field: MEDIA_KEY, values: [...mediaKeys] }], url, MAX_TERMS)) {
    let next: string | undefined = url(field, values);
    while (next) {
      const where = { file: label, record: `Media by key, request ${++pages}` };
      if (pages > source.maxPages)
        throw new FeedReadError(
          `the Media records of the EntityEvent log's Media events take more than source.maxPages (${source.maxPages}) requests`,
          where,
          false,
        );
      const page = await client.get(next, where.record, 'byKey');
      for (const row of page.value) {
        const r = row as Record<string, unknown>;
        const name = r.ResourceName;
        const key = r.ResourceRecordKey;
        if ((name === undefined || name === source.resource) && (typeof key === 'string' || typeof key === 'number'))
          parents.add(String(key));
      }
      const link = page['@odata.nextLink'];
      next = link ? nextLinkUrl(link, next, origin, where) : undefined;
    }
  }
  return parents;
}
