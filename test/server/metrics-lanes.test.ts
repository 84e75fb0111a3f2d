// The worker's listing counters of a run that wrote into several chatbots (a routed feed: its report
// leads with one lane's, the others under `lanes`): every lane's writes count, under the feed.
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/server/metrics.js';

describe('metrics of a routed feed run', () => {
  it("count every lane's listings under the feed", async () => {
    // no queue: the queue gauge then has nothing to read
    const metrics = createMetrics({}, { defaultMetrics: false });
    const lane = (chatbot: string, created: number, updated: number) => ({
      outcome: 'ok',
      summary: '',
      feed: 'brokerage',
      chatbot,
      counts: { created, updated, deleted: 0, failed: 0 },
    });
    const lanes = [lane('SN-A', 2, 1), lane('SN-B', 3, 0), lane('SN-C', 0, 4)];
    const report = { ...lanes[0]!, lanes };
    metrics.onRun({ job: 'listing-sync', report });
    const text = await metrics.registry.metrics();
    expect(text).toContain('feedsync_listings_total{feed="brokerage",op="created"} 5');
    expect(text).toContain('feedsync_listings_total{feed="brokerage",op="updated"} 5');
    expect(text).toContain('feedsync_runs_total{job="listing-sync",outcome="ok"} 1');
  });
});
