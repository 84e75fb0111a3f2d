// Opens a feed from its config: the reader for its kind over its source. A reconcile (ctx.ask
// `reconcile`: reso/reso-asks.ts) of a live RESO source reads keys only (reso/reso-reconcile.ts);
// pushed events (ctx.ask `pushed`) fetch the keys they name and nothing else (reso/reso-push.ts); a
// file, or a replay, is read whole.
// A RESO source with `related: [Member, Office]` pulls its roster first (reso/reso-roster.ts).
import type { FeedSource } from './config-schema.js';
import { readCsv } from './csv/csv-reader.js';
import { readMits } from './mits/mits-reader.js';
import { openReso } from './reso/reso-reader.js';
import { openResoChanges } from './reso/reso-events.js';
import { openResoReconcile } from './reso/reso-reconcile.js';
import { openResoPushed } from './reso/reso-push.js';
import { requestTally } from './reso/reso-requests.js';
import { openWithRoster } from './reso/reso-roster.js';
import { withOpenHouses } from './reso/reso-open-houses.js';
import { withAddedRelated } from './reso/related-resources.js';
import { keyMapOf, withKeyMap } from './reso/reso-key-map.js';
import { openSource } from './source/source.js';
import type { FeedContext, OpenedFeed } from './types.js';
import { readXml } from './xml/xml-reader.js';

export function openFeed(feedName: string, source: FeedSource, ctx: FeedContext): OpenedFeed {
  if (source.kind === 'reso') {
    // one tally for the feed's read: its roster's and open houses' requests (reso-roster.ts, reso-open-houses.ts) in it too
    const tally = requestTally();
    // the record key beside the listing key of every record read, what a gone record key resolves by (reso-key-map.ts)
    const keys = keyMapOf(ctx, source.keyField);
    const options = { tally, ...(keys && { keys }) };
    const open = (c: FeedContext): OpenedFeed => {
      if (c.ask?.name === 'pushed' && source.url) return openResoPushed(feedName, source, c, c.ask, options);
      if (c.ask?.name === 'reconcile' && c.keys && source.url)
        return openResoReconcile(feedName, source, c, c.keys, options);
      const events = source.changes === 'entityEvent' || (source.changes === 'auto' && source.incremental);
      return events && source.url
        ? openResoChanges(feedName, source, c, options)
        : openReso(feedName, source, c, options);
    };
    // open houses over the roster: every record, the roster's re-read ones too, gets them joined; a related
    // resource added (related-resources.ts) over both
    const related = withOpenHouses(feedName, source, ctx, openWithRoster(feedName, source, ctx, open, tally), tally);
    return withKeyMap(withAddedRelated(feedName, source, ctx, related, tally), keys);
  }
  const { label, bytes } = openSource(source, ctx);
  const items =
    source.kind === 'csv'
      ? readCsv(
          bytes,
          {
            label,
            delimiter: source.delimiter,
            quote: source.quote,
            encoding: source.encoding,
            maxRecordBytes: source.maxRecordBytes,
            maxColumns: source.maxColumns,
            ...(ctx.columns && { columns: ctx.columns }),
          },
          { lazy: ctx.mostlyUnmapped === true },
        )
      : source.kind === 'mits'
        ? readMits(bytes, {
            label,
            recordPath: source.recordPath,
            recordPer: source.recordPer,
            encoding: source.encoding,
            maxPropertyChars: source.maxPropertyChars,
          })
        : readXml(bytes, { label, recordPath: source.recordPath, encoding: source.encoding });
  return { items, mode: 'full', mark: undefined };
}
