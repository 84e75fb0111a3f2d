import { describe, expect, it } from 'vitest';
import { fetchRemote } from '../../src/sync/remote/remote.js';
import { createFakeApi } from './helpers/fake-api.js';
import { listing } from './helpers/listings.js';

const opts = { serialNumber: 'SN-1', keyBy: 'MLSNumber' as const, pageSize: 20, concurrency: 4 };

describe('fetchRemote', () => {
  it('pages every listing with the fewest calls', async () => {
    const fake = createFakeApi();
    for (let i = 0; i < 45; i++) fake.add(listing(`M${i}`));
    const remote = await fetchRemote(fake.api, opts);
    expect(remote).toMatchObject({ count: 45, virtualCount: 45, complete: true, pages: 3, rounds: 1 });
    expect(remote.byKey.size).toBe(45);
    expect(fake.count('list')).toBe(3);
  });

  it('notices a capped page size and pages on with the size the server gave', async () => {
    const fake = createFakeApi({ maxPageSize: 7 });
    for (let i = 0; i < 50; i++) fake.add(listing(`M${i}`));
    const remote = await fetchRemote(fake.api, opts);
    expect(remote.byKey.size).toBe(50);
    expect(remote.complete).toBe(true);
    expect(fake.count('list')).toBe(8); // ceil(50 / 7)
    expect(fake.calls.slice(1).every((c) => (c.body as { PageSize: number }).PageSize === 7)).toBe(true);
  });

  it('pages again when a listing deleted mid-paging shifts the pages', async () => {
    const fake = createFakeApi();
    for (let i = 0; i < 60; i++) fake.add(listing(`M${i}`));
    let deleted = false;
    fake.onList((page) => {
      if (page === 2 && !deleted) {
        fake.listings.delete(1); // M0 goes: page 2 now starts one later, M20 would be missed
        deleted = true;
      }
    });
    const remote = await fetchRemote(fake.api, { ...opts, concurrency: 1 });
    expect(remote.complete).toBe(true);
    expect(remote.rounds).toBe(2);
    expect(remote.byKey.has('M20')).toBe(true);
    expect(remote.byKey.has('M0')).toBe(false);
    expect(remote.count).toBe(59);
  });

  it('marks the side incomplete when paging never agrees with VirtualCount', async () => {
    const fake = createFakeApi();
    for (let i = 0; i < 30; i++) fake.add(listing(`M${i}`));
    let n = 100;
    fake.onList((page) => {
      if (page === 2) fake.add(listing(`NEW${n++}`)); // a listing appears during every pass
    });
    const remote = await fetchRemote(fake.api, { ...opts, maxRounds: 2 });
    expect(remote.complete).toBe(false);
    expect(remote.problem).toContain('after 2 passes');
  });

  it('keys by URL and groups duplicate copies of one key', async () => {
    const fake = createFakeApi();
    fake.add(listing('A', { Url: 'https://x/1' }));
    fake.add(listing('B', { Url: 'https://x/1' }));
    const remote = await fetchRemote(fake.api, { ...opts, keyBy: 'URL' });
    expect(remote.byKey.get('https://x/1')?.map((r) => r.id)).toEqual([1, 2]);
  });
});
