// overlayFeed (src/feeds/feed-overlay.ts): a wrapper's feed reads every part it does not replace from
// the inner feed when asked, so a reader's getters (mark, mode, unread) are seen as they are after
// its items were read, through any number of wrappers.
import { describe, expect, it } from 'vitest';
import { joinedLookup, overlayFeed } from '../../src/feeds/feed-overlay.js';
import type { FeedItem, KeyLookup, OpenedFeed } from '../../src/feeds/types.js';

async function* none(): AsyncIterable<FeedItem> {}

function reader(): { feed: OpenedFeed; finish: () => void } {
  let done = false;
  const feed: OpenedFeed = {
    items: none(),
    get mode() {
      return done ? 'full' : 'incremental';
    },
    get mark() {
      return done ? '{"ts":"2026-11-27T00:00:00Z"}' : undefined;
    },
    get unread() {
      return done ? new Set(['K1']) : undefined;
    },
  };
  return { feed, finish: () => (done = true) };
}

describe('overlayFeed', () => {
  it('reads the parts it does not replace from the inner feed each time they are asked', () => {
    const { feed, finish } = reader();
    const wrapped = overlayFeed(feed, {});
    expect([wrapped.mode, wrapped.mark, wrapped.unread]).toEqual(['incremental', undefined, undefined]);
    finish();
    expect([wrapped.mode, wrapped.mark, wrapped.unread]).toEqual([
      'full',
      '{"ts":"2026-11-27T00:00:00Z"}',
      new Set(['K1']),
    ]);
  });

  it('keeps its own parts, getters as getters, and passes them on through a second wrapper', () => {
    const { feed, finish } = reader();
    let learned = 0;
    const first = overlayFeed(feed, {
      get mark() {
        return feed.mark === undefined ? undefined : `${feed.mark}+roster`;
      },
      get state() {
        return learned ? new Map() : undefined;
      },
    });
    const second = overlayFeed(first, { since: '2026-11-26T00:00:00Z' });
    finish();
    learned = 1;
    expect(second.mark).toBe('{"ts":"2026-11-27T00:00:00Z"}+roster');
    expect(second.state).toEqual(new Map());
    expect(second.mode).toBe('full');
    expect(second.since).toBe('2026-11-26T00:00:00Z');
  });
});

describe('joinedLookup', () => {
  it("keeps the inner lookup's idField (the sync asks a removal's other records by the key's other fields, issue 54.4)", () => {
    const inner: KeyLookup = {
      paging: { used: 'keyset', advice: '' },
      idField: 'ListingKey',
      async *find() {},
    };
    expect(joinedLookup(inner, (item) => item)?.idField).toBe('ListingKey');
  });
});
