// "No successful sync for H hours" from the worker's timer: one alert when it starts to hold, none
// on the next checks, "resolved" with the next good run.
import { describe, expect, it } from 'vitest';
import { alertAfterRun, checkStaleness } from '../../src/alerts/index.js';
import { AlertsConfig } from '../../src/alerts/config-schema.js';
import { silentLogger } from '../../src/log.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { startHttpReceiver } from './receivers.js';

describe('staleness alerts', () => {
  it('alerts once when a feed goes stale, and resolves on its next good run', async () => {
    const hook = await startHttpReceiver();
    try {
      const store = createMemoryStore();
      const config = AlertsConfig.parse({ channels: [{ kind: 'webhook', url: hook.url, secret: 'whsec-stale-1234' }], rules: { staleHours: 24 } });
      const target = { feed: 'austin', chatbot: 'SN-1' };
      const t0 = new Date('2026-11-20T00:00:00Z');
      const hours = (h: number) => new Date(t0.getTime() + h * 3_600_000);
      const good = { runId: 'r1', at: t0.toISOString(), outcome: 'ok', records: 10, valid: 10, rejected: 0, unmapped: [] };
      expect(await alertAfterRun(store, config, target, good, silentLogger, t0)).toEqual([]);

      expect(await checkStaleness(store, config, [target], t0.toISOString(), silentLogger, hours(23))).toEqual([]);
      const fired = await checkStaleness(store, config, [target], t0.toISOString(), silentLogger, hours(25));
      expect(fired.map((n) => `${n.status} ${n.condition}`)).toEqual(['firing stale']);
      expect(fired[0]!.message).toMatch(/no successful sync for 25\.0 h/);
      expect(await checkStaleness(store, config, [target], t0.toISOString(), silentLogger, hours(30))).toEqual([]);

      const back = await alertAfterRun(store, config, target, { ...good, runId: 'r2', at: hours(31).toISOString() }, silentLogger, hours(31));
      expect(back.map((n) => `${n.status} ${n.condition}`)).toEqual(['resolved stale']);
      expect(hook.received.map((r) => JSON.parse(r.body).status)).toEqual(['firing', 'resolved']);
    } finally {
      await hook.close();
    }
  });
});
