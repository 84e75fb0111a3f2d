// A routed lane whose where selects no record of a feed read whole (its agent's listings all went
// to another agent, or left the feed), over real HTTP: the feed is not empty, so the empty-feed
// guard does not hold the lane; its chatbot's listings go within deletes.maxFraction / maxCount,
// and the report says that no record matched its where. A feed whose records match no chatbot at
// all is another matter: every lane's deletes are held, as for an empty feed.
import { describe, expect, it } from 'vitest';
import { formatSyncReport, type SyncReport } from '../../src/sync/index.js';
import type { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { useEmulatorSync, type SyncEnv } from './helpers/feed.js';
import { agentCsv, annBobFeed, runLanesOf } from './helpers/routed.js';

let te: TestEmulator;
let env: SyncEnv;
const { closeAfterTest } = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});
const run = async (feed: FeedConfig): Promise<SyncReport[]> => (await runLanesOf(te, env, [feed])).reports;

async function routed(agents: string[], deletes: Record<string, number>) {
  const server = closeAfterTest(await startFeedServer({ status: 200, body: agentCsv(agents) }));
  return { server, feed: annBobFeed(server.url, deletes) };
}

const held = async (sn: string) => (await te.listings(sn)).length;

describe('a routed lane whose where selects no record', () => {
  it("is not held by the empty-feed guard: the chatbot's listings go (deletes.maxFraction 1), and the report says no record matched", async () => {
    const { server, feed } = await routed(['ann', 'ann', 'bob', 'bob'], { maxFraction: 1 });
    await run(feed);
    expect([await held('SN-ANN'), await held('SN-BOB')]).toEqual([2, 2]);

    // every listing is Bob's now
    server.answer = { status: 200, body: agentCsv(['bob', 'bob', 'bob', 'bob']) };
    const reports = await run(feed);
    expect(reports.map((r) => [r.chatbot, r.outcome, r.counts.deleted, r.counts.created, r.guard.outcome])).toEqual([
      ['SN-ANN', 'ok', 2, 0, 'passed'],
      ['SN-BOB', 'ok', 0, 2, 'none'],
    ]);
    expect([await held('SN-ANN'), await held('SN-BOB')]).toEqual([0, 4]);
    expect(reports[0]!.message).toBe("none of the feed's 4 records matched chatbot SN-ANN's where");
    expect(formatSyncReport(reports[0]!)).toContain("none of the feed's 4 records matched chatbot SN-ANN's where");
  });

  it('is still held by deletes.maxFraction, with the reason and why', async () => {
    const { server, feed } = await routed(['ann', 'ann', 'bob', 'bob'], { maxFraction: 0.5 });
    await run(feed);
    server.answer = { status: 200, body: agentCsv(['bob', 'bob', 'bob', 'bob']) };
    const [ann] = await run(feed);
    expect(ann!.outcome).toBe('guard');
    expect(ann!.guard.reasons).toEqual(['2 of 2 remote listings (100%) exceed deletes.maxFraction 50%']);
    expect(ann!.message).toContain("none of the feed's 4 records matched chatbot SN-ANN's where");
    expect(await held('SN-ANN')).toBe(2);
  });

  it('a feed none of whose records matches any chatbot holds every lane, as an empty feed does', async () => {
    const { server, feed } = await routed(['ann', 'ann', 'bob', 'bob'], { maxFraction: 1 });
    await run(feed);
    server.answer = { status: 200, body: agentCsv(['carl', 'carl', 'carl', 'carl']) };
    const reports = await run(feed);
    expect(reports.map((r) => [r.chatbot, r.outcome, r.guard.reasons])).toEqual([
      ['SN-ANN', 'guard', ['the feed yielded no valid listing']],
      ['SN-BOB', 'guard', ['the feed yielded no valid listing']],
    ]);
    expect([await held('SN-ANN'), await held('SN-BOB')]).toEqual([2, 2]);
  });
});
