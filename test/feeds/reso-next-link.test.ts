// Every pager of a RESO feed follows @odata.nextLink the same way (reso-query.ts nextLinkUrl): on the
// feed's origin, over http(s), and a link that is not a URL ends the read with a FeedReadError that
// names the page, never a bare TypeError ("Invalid URL") that names nothing.
import { describe, expect, it } from 'vitest';
import { FeedReadError } from '../../src/errors.js';
import { FeedSource, type ResoSource } from '../../src/feeds/config-schema.js';
import { addMediaParents } from '../../src/feeds/reso/reso-media-events.js';
import type { PageClient } from '../../src/feeds/reso/reso-pages.js';
import { requestTally } from '../../src/feeds/reso/reso-requests.js';
import { failure } from '../helpers/failure.js';

const source = FeedSource.parse({ kind: 'reso', url: 'https://mls.example/odata' }) as ResoSource;

/** A page client whose every page holds one Media record and the given nextLink. */
function linking(next: string): PageClient & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    get: async (url) => {
      asked.push(url);
      return {
        value: [{ MediaKey: 'M1', ResourceName: 'Property', ResourceRecordKey: 'P1' }],
        '@odata.nextLink': next,
      };
    },
    text: async () => '',
    requests: 0,
    tally: requestTally(),
    bytes: 0,
    serverTime: undefined,
    lastHeaders: undefined,
  };
}

describe('@odata.nextLink of the Media asked for Media events', () => {
  it('a nextLink that is not a URL ends the read naming the request, not with a TypeError', async () => {
    const client = linking('http://[broken');
    const err = await failure(addMediaParents(new Set(), ['M1'], { client, source, label: 'f', events: {} as never }));
    expect(err).toBeInstanceOf(FeedReadError);
    expect(err.message).toMatch(/Media by key, request 1.*nextLink.*not a URL/);
    expect(client.asked).toHaveLength(1);
  });

  it('a nextLink to another origin or scheme is not followed', async () => {
    for (const next of ['https://elsewhere.example/odata/Media?$skip=1', 'file:///etc/passwd']) {
      const client = linking(next);
      const err = await failure(
        addMediaParents(new Set(), ['M1'], { client, source, label: 'f', events: {} as never }),
      );
      expect(err).toBeInstanceOf(FeedReadError);
      expect(client.asked).toHaveLength(1);
    }
  });
});
