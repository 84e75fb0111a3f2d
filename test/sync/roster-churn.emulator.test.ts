// Issue 49, point 9: a churning roster (source.related: Member) over HTTP against
// test/helpers/vendor-server.ts (Trestle's documented rules, cited in its header: Property filters
// on ListAgentKey, `$top` at most 1000). Every agent's phone changes at once; asking for the
// listings of all of them takes more requests than source.maxPages. The re-ask is capped per run
// (within source.maxPages requests), the rest asked the next run (remembered in the feed's mark),
// and the run says so naming the roster; it is not a partial run about "absences".
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedConfig } from '../../src/config/schema.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startVendorServer, type VendorServer } from '../helpers/vendor-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const OAUTH = { clientId: 'trestle-client', clientSecret: 'trestle-secret-4411' };
const T0 = '2026-11-01T00:00:00.000Z';
const N = 300;
const agent = (i: number) => `AGENT-${String(i).padStart(3, '0')}`;

/** N listings, each with its own agent */
const listings = () =>
  generateResoRecords(N, { seed: 49 }).map((r, i) => ({
    ...r,
    StandardStatus: 'Active',
    MlgCanView: true,
    ListAgentKey: agent(i),
    ListAgentPreferredPhone: '555-0000',
  }));
const members = () =>
  Array.from({ length: N }, (_, i) => ({
    MemberKey: agent(i),
    MemberFullName: `Agent ${i}`,
    MemberPreferredPhone: '512-555-0100',
    ModificationTimestamp: T0,
  }));

/** each listing's agent phone, by ListingId */
async function phones(): Promise<Map<string, string | undefined>> {
  return new Map(
    (await te.listings(SN)).map((l) => [
      l.MLSNumber,
      (l.ExtensionColumn ?? []).find((e) => e.Key === 'ListAgentPhone')?.value,
    ]),
  );
}

/** the Property requests by key (ListAgentKey filters) the server received since `from` */
const askedByAgent = (s: VendorServer, from: number) =>
  s.requests
    .slice(from)
    .filter((r) => r.url.includes('/Property') && decodeURIComponent(r.url).includes('ListAgentKey eq'));

describe('a churning roster (source.related: Member)', () => {
  it(
    're-asks its listings within source.maxPages a run, the rest the next run, and says so naming the roster',
    { timeout: 90_000 },
    async () => {
      const s = emulator.closeAfterTest(
        await startVendorServer({
          vendor: 'trestle',
          records: listings(),
          oauth: OAUTH,
          related: { Member: members() },
        }),
      );
      const maxPages = 3;
      const feed = FeedConfig.parse({
        name: 'mls',
        chatbot: SN,
        source: {
          kind: 'reso',
          vendor: 'trestle',
          url: s.url,
          auth: { tokenUrl: s.tokenUrl, ...OAUTH },
          incremental: true,
          changes: 'timestamps',
          related: ['Member'],
          maxPages,
          maxPageSize: 1000,
        },
        mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
        deletes: { maxFraction: 0.5 },
      });
      const first = await env.sync(te, feed);
      expect(first.outcome, first.message).toBe('ok');
      expect(first.counts.created).toBe(N);

      // every agent's phone changes
      for (let i = 0; i < N; i++) s.touchRelated('Member', agent(i), { MemberPreferredPhone: '512-555-7777' });
      let from = s.requests.length;
      const second = await env.sync(te, feed);
      expect(second.outcome, second.message).toBe('ok');
      expect(askedByAgent(s, from).length).toBeGreaterThan(0);
      expect(askedByAgent(s, from).length).toBeLessThanOrEqual(maxPages);
      const updatedFirst = second.counts.updated;
      expect(updatedFirst).toBeGreaterThan(0);
      expect(updatedFirst).toBeLessThan(N);
      expect(formatSyncReport(second)).toMatch(
        /source warning: Member roster: asking for the listings of its changed records takes more than source\.maxPages \(3\) requests a run: \d+ records' listings are read again next run/,
      );
      expect(formatSyncReport(second)).not.toMatch(/absences/);

      // the next runs ask for the rest, until every listing has its agent's new phone; none asked twice
      let runs = 1;
      let updated = updatedFirst;
      while (updated < N && runs < 10) {
        from = s.requests.length;
        const next = await env.sync(te, feed);
        expect(next.outcome, next.message).toBe('ok');
        expect(askedByAgent(s, from).length).toBeLessThanOrEqual(maxPages);
        updated += next.counts.updated;
        runs++;
      }
      expect(updated).toBe(N);
      expect([...(await phones()).values()].every((p) => p === '512-555-7777')).toBe(true);
      // nothing left: a run asks no listing by agent
      from = s.requests.length;
      const idle = await env.sync(te, feed);
      expect(idle.counts.updated).toBe(0);
      expect(askedByAgent(s, from)).toEqual([]);
    },
  );
});
