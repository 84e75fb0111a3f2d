// Generic RESO servers degrade clearly (vendor: reso, the default): a server that refuses the keyset
// query is paged by nextLink instead, once, with a warning in the report naming `paging: nextLink`;
// `paging: nextLink` sends no $orderby at all; a server that refuses $orderby still gets a mark
// (from the records received), so incremental pulls work against it.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { NOT_SHOWN } from './helpers/reso-records.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const feedFor = (url: string, extra: Record<string, unknown> = {}) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: { kind: 'reso', url, incremental: true, maxPageSize: 20, retries: 0, ...extra },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
  });
// (what an idx feed, a RESO feed's default, does not show)
const OFF = NOT_SHOWN;
const onMarket = (records: Record<string, unknown>[]) =>
  records.filter((r) => !OFF.has(String(r.StandardStatus))).length;

describe('a generic server that refuses $orderby', () => {
  it('keyset is refused once, the pull pages by nextLink with a warning, and the mark comes from the records', async () => {
    const s = emulator.closeAfterTest(
      await startResoServer({ records: generateResoRecords(50, { seed: 8 }), maxPageSize: 20, refuseOrderby: true }),
    );
    const first = await env.sync(te, feedFor(s.url));
    expect(first.outcome, first.message).toBe('ok');
    expect(first.source.warnings).toEqual([
      expect.stringMatching(
        /refused the keyset query \(.*HTTP 400 Bad Request: The query option \$orderby is not supported\).*paging: nextLink/,
      ),
    ]);
    expect((await te.listings(SN)).length).toBe(onMarket(s.records));
    expect(s.requests.map((r) => r.status)).toEqual([400, 200, 200, 200]);
    // (and $metadata: source.changes auto asks whether the server keeps an EntityEvent log; it does not)
    expect(first.source).toMatchObject({ pages: 3, requests: 5 });

    // the mark came from the records: an incremental pull asks from it, and reads only what changed
    s.touch(String(s.records[0]!.ListingKey), { ListPrice: 777_000 });
    const before = s.requests.length;
    const second = await env.sync(te, feedFor(s.url));
    expect(second.outcome).toBe('ok');
    expect(second.source.mode).toBe('incremental');
    expect(s.requests.slice(before).map((r) => r.filter)).toEqual([
      expect.stringMatching(/^ModificationTimestamp ge /),
      expect.stringMatching(/^ModificationTimestamp ge /),
    ]);
    // the changed record, and the one at the mark's own timestamp again (ge)
    expect(second.counts.feedRecords).toBe(2);
    expect(second.counts.updated).toBe(1);
  });

  it('paging: nextLink sends no $orderby, so the server refuses nothing', async () => {
    const s = emulator.closeAfterTest(
      await startResoServer({ records: generateResoRecords(50, { seed: 8 }), maxPageSize: 20, refuseOrderby: true }),
    );
    const first = await env.sync(te, feedFor(s.url, { paging: 'nextLink' }));
    expect(first.outcome).toBe('ok');
    expect(first.source.warnings).toBeUndefined();
    expect(s.requests.every((r) => r.status === 200 && r.orderby === undefined)).toBe(true);
    expect(first.source).toMatchObject({ pages: 3, requests: 4 }); // (the pages and $metadata)
    const second = await env.sync(te, feedFor(s.url, { paging: 'nextLink' }));
    expect(second.source).toMatchObject({ mode: 'incremental', requests: 1 });
  });
});
