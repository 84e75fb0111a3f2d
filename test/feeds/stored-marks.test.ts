// A stored mark a RESO read cannot use is said, in one form, never passed over: the feed's own
// high-water mark, the roster's marks inside it (`related`), the open houses' mark (`oh`) and a
// listing's kept open houses. Each names the mark and the feed, says what was wrong and the whole
// pull that follows; the warning is in the read's warnings (the run's report) and its log, and the
// pull that follows is whole.
import { afterEach, describe, expect, it } from 'vitest';
import { FeedSource } from '../../src/feeds/index.js';
import { openFeed } from '../../src/feeds/open-feed.js';
import type { FeedContext, ListingKeys, SourceState } from '../../src/feeds/types.js';
import { reconcileAsk } from '../../src/feeds/reso/reso-asks.js';
import { silentLogger } from '../../src/log.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { collect } from './helpers.js';

const T1 = '2025-03-01T10:00:00.000Z';
const T2 = '2025-03-01T11:00:00.000Z';
const servers: ResoServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const listing = (key: string) => ({
  ListingKey: key,
  ListingId: `MLS-${key}`,
  ModificationTimestamp: T1,
  StandardStatus: 'Active',
  PropertyType: 'Residential',
});

/** A store holding `openhouse` copies for one lane (what the last run kept), nothing else. */
function stateWith(openHouses: Record<string, string>): SourceState {
  const copy = (ns: string) => new Map(ns === 'openhouse' ? Object.entries(openHouses) : []);
  return {
    lanes: ['SN-1'],
    copies: async (ns) => [copy(ns)],
    lookup: async (ns, keys) => [keys.map((k) => copy(ns).get(k))],
  };
}

/** The feed read whole with `mark` and the store `state` (changes found by `changes`, open houses joined or expanded); its items, warnings, what was logged warn, and the server's asks of a resource. */
async function read(
  mark: string,
  {
    state = stateWith({}),
    changes = 'timestamps',
    openHouses = 'related',
    reconcile = false,
  }: {
    state?: SourceState;
    changes?: 'timestamps' | 'entityEvent';
    openHouses?: 'related' | 'expand';
    /** a keys-only reconcile (no lane holds a key: every record is fetched by key) */
    reconcile?: boolean;
  } = {},
) {
  const server = await startResoServer({
    records: [listing('A'), listing('B')],
    entityEvents: changes === 'entityEvent',
    related: {
      Member: [{ MemberKey: 'M1', MemberFullName: 'Ann Agent', ModificationTimestamp: T1 }],
      OpenHouse: [
        {
          OpenHouseKey: 'oh-1',
          ListingKey: 'B',
          ListingId: 'MLS-B',
          OpenHouseStartTime: '2025-03-02T16:00:00.000Z',
          OpenHouseEndTime: '2025-03-02T18:00:00.000Z',
          OpenHouseStatus: 'Active',
          ModificationTimestamp: T1,
        },
      ],
    },
  });
  servers.push(server);
  const source = FeedSource.parse({
    kind: 'reso',
    url: server.url,
    incremental: true,
    changes,
    related: openHouses === 'related' ? ['Member', 'OpenHouse'] : ['Member'],
    expandOpenHouse: openHouses === 'expand',
    retries: 1,
    timeoutMs: 5000,
  });
  const logged: string[] = [];
  const logger = Object.assign(Object.create(silentLogger) as typeof silentLogger, {
    warn: (_o: unknown, msg: string) => void logged.push(msg),
  });
  const keys: ListingKeys = {
    keyFields: ['ListingKey'],
    keyOf: (d) => (typeof d.ListingKey === 'string' ? d.ListingKey : undefined),
    holds: () => false,
  };
  const ctx: FeedContext = { baseDir: '/', logger, mark, state, ...(reconcile && { ask: reconcileAsk, keys }) };
  const feed = openFeed('mls', source, ctx);
  const items = await collect(feed.items);
  const asked = (resource: string) => server.requests.filter((r) => r.url.split('?')[0]!.endsWith(`/${resource}`));
  return { feed, items, warnings: feed.stats?.warnings ?? [], logged, asked };
}

const usable = { ts: T2, related: { Member: { ts: T1 } }, oh: T1 };

describe('a stored mark that cannot be used', () => {
  it('none: nothing said, the pull is incremental', async () => {
    const { warnings, logged, feed, asked } = await read(JSON.stringify(usable));
    expect(warnings.filter((w) => /stored/.test(w))).toEqual([]);
    expect(logged).toEqual([]);
    expect(feed.mode).toBe('incremental');
    expect(asked('OpenHouse').some((r) => r.filter?.includes('ModificationTimestamp'))).toBe(true);
  });

  it("the roster's marks (`related` not an object): said, naming the feed, the mark and the full pull that follows", async () => {
    const { warnings, logged, feed, asked } = await read(JSON.stringify({ ...usable, related: 'oops' }));
    const said = warnings.find((w) => w.includes('roster marks'));
    expect(said).toMatch(/^feed mls: the stored roster marks \(related: Member\) cannot be used \(`related` is "oops"/);
    expect(said).toMatch(/Member is pulled whole, and the feed with it \(a full pull\)/);
    expect(logged).toContain(said);
    expect(feed.mode).toBe('full');
    expect(asked('Member').every((r) => !r.filter?.includes('ModificationTimestamp'))).toBe(true);
  });

  it("the open houses' mark (`oh` not a timestamp): said, and every OpenHouse record is pulled", async () => {
    const { warnings, logged, asked } = await read(JSON.stringify({ ...usable, oh: 'tuesday' }));
    const said = warnings.find((w) => w.includes('open houses mark'));
    expect(said).toMatch(/^feed mls: the stored open houses mark \(oh\) cannot be used \(`oh` is "tuesday"/);
    expect(said).toMatch(/every OpenHouse record is pulled/);
    expect(logged).toContain(said);
    expect(asked('OpenHouse').length).toBeGreaterThan(0);
    expect(asked('OpenHouse').every((r) => !r.filter?.includes('ModificationTimestamp'))).toBe(true);
  });

  it("a listing's kept open houses that do not parse: said, naming the listing, and every OpenHouse record is pulled", async () => {
    const { warnings, asked } = await read(JSON.stringify(usable), { state: stateWith({ A: '{not json' }) });
    const said = warnings.find((w) => w.includes('open houses (kept by listing)'));
    expect(said).toMatch(/the kept open houses of 1 listing\(s\) do not parse, A\)/);
    expect(asked('OpenHouse').every((r) => !r.filter?.includes('ModificationTimestamp'))).toBe(true);
  });

  it("a listing's kept open houses that do not parse, open houses expanded: said, naming the listing, and the listing fetched by key to read them again", async () => {
    const { warnings, logged, items, asked } = await read(JSON.stringify(usable), {
      state: stateWith({ A: '{not json', B: JSON.stringify({ id: 'MLS-B', oh: 'soon' }) }),
      openHouses: 'expand',
    });
    const said = warnings.filter((w) => w.includes('cannot be used'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^feed mls: the stored open houses \(kept by listing\) cannot be used \(the kept open houses of 2 listing\(s\) do not parse, A, B\): /,
    );
    expect(said[0]).toMatch(/read again from their records/);
    expect(logged).toContain(said[0]);
    // (the pull from the mark reads neither: both are asked for by key, and their open houses read from them)
    expect(asked('Property').some((r) => /ListingKey/.test(r.filter ?? '') && /'A'/.test(r.filter ?? ''))).toBe(true);
    expect(items.filter((i) => i.kind === 'record').map((i) => i.position.id)).toEqual(
      expect.arrayContaining(['A', 'B']),
    );
  });

  it("a listing's kept open houses that do not parse, in a reconcile: said, naming the listing and that it is written without them", async () => {
    // (a mark before the records' time: the reconcile fetches both by key)
    const { warnings, logged, items } = await read(JSON.stringify({ ...usable, ts: '2025-03-01T09:00:00.000Z' }), {
      state: stateWith({ A: '{not json' }),
      reconcile: true,
    });
    const said = warnings.filter((w) => w.includes('cannot be used'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^feed mls: the stored open houses \(kept by listing\) cannot be used \(the kept open houses of 1 listing\(s\) do not parse, A\): /,
    );
    expect(said[0]).toMatch(/the listings this read writes get no open houses/);
    expect(logged).toContain(said[0]);
    expect(items.some((i) => i.kind === 'record' && i.position.id === 'A')).toBe(true);
  });

  it('the EntityEvent mark (`seq` not a sequence): said, with the pull by timestamps that follows and the log read from its newest event', async () => {
    const { warnings, logged, feed, asked } = await read(JSON.stringify({ ...usable, seq: 'x12' }), {
      changes: 'entityEvent',
    });
    const said = warnings.filter((w) => w.includes('cannot be used'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^feed mls: the stored EntityEvent mark \(seq\) cannot be used \(`seq` is "x12"/);
    expect(said[0]).toMatch(
      /finds changes by ModificationTimestamp, not in the log .*the EntityEvent log is read from its newest event on/,
    );
    expect(logged).toContain(said[0]);
    expect(feed.mode).toBe('incremental');
    // the log asked only for its newest event (the new start), never polled from the unusable mark
    expect(asked('EntityEvent').map((r) => r.filter)).toEqual([undefined]);
  });

  it('an EntityEvent mark that is usable: nothing said, the log polled from it', async () => {
    const { warnings, logged, asked } = await read(JSON.stringify({ ...usable, seq: '0' }), { changes: 'entityEvent' });
    expect(warnings.filter((w) => /stored/.test(w))).toEqual([]);
    expect(logged).toEqual([]);
    expect(asked('EntityEvent').map((r) => r.filter)).toEqual(['EntityEventSequence gt 0']);
  });

  it("the feed's own mark (not JSON): said once, as the feed's mark, and everything is pulled", async () => {
    const { warnings, feed } = await read('{torn');
    const said = warnings.filter((w) => w.includes('cannot be used'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^feed mls: the stored RESO high-water mark cannot be used \(.*JSON.*\): .*a full pull/);
    expect(feed.mode).toBe('full');
  });

  it("the feed's own mark (not JSON) of an EntityEvent feed: said once, as the feed's mark", async () => {
    const { warnings, feed } = await read('{torn', { changes: 'entityEvent' });
    const said = warnings.filter((w) => w.includes('cannot be used'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^feed mls: the stored RESO high-water mark cannot be used/);
    expect(feed.mode).toBe('full');
  });
});
