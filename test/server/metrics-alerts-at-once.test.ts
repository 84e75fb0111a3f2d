// A scrape reads the watched lanes' alert states at once, not one round trip after another: a
// worker of 500 lanes (a fleet's routed feeds) sent 500 Redis GETs end to end on every scrape.
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/server/metrics.js';

describe('feedsync_alerts_firing', () => {
  it('asks for every lane alert state before the first answer, and shows the ones firing', async () => {
    const lanes = Array.from({ length: 500 }, (_, i) => ({ feed: `mls${i % 5}`, lane: `mls${i % 5}@${i}` }));
    const asked: string[] = [];
    let answer!: () => void;
    const answered = new Promise<void>((r) => (answer = r));
    // the store answers no get until every lane has been asked (a scrape one lane at a time waits forever)
    const store = {
      async get(_ns: string, lane: string) {
        asked.push(lane);
        if (asked.length === lanes.length) answer();
        await answered;
        return lane.endsWith('@7')
          ? JSON.stringify({ open: { 'feed-failed': { since: 'x' } }, streak: {} })
          : undefined;
      },
    };
    const metrics = createMetrics({}, { defaultMetrics: false });
    metrics.watchAlerts(lanes, store);
    const scrape = metrics.registry.metrics();
    const body = await Promise.race([
      scrape,
      new Promise<string>((r) => setTimeout(() => r(`asked ${asked.length} of ${lanes.length}`), 2000)),
    ]);
    expect(asked).toHaveLength(lanes.length);
    expect(body).toContain('feedsync_alerts_firing{feed="mls2",lane="mls2@7",condition="feed-failed"} 1');
    expect(body.match(/^feedsync_alerts_firing\{/gm)).toHaveLength(1);
  });
});
