// Failures said once (src/queue/said-once.ts), on a clock the test moves: said when new, not again
// while the same, again when the words change, again after the long while with how often it failed,
// and at once when it comes back after stopping.
import { describe, expect, it } from 'vitest';
import { failuresSaid } from '../../src/queue/said-once.js';

describe('failures said once', () => {
  it('once, again on a change, again after the while, and at once after it stopped failing', () => {
    let t = Date.parse('2026-12-07T10:00:00Z');
    const said = failuresSaid(60_000, () => t);
    expect(said.toSay('sync:austin', 'refused: -10')).toEqual({});
    t += 1000;
    expect(said.toSay('sync:austin', 'refused: -10')).toBeUndefined();
    expect(said.toSay('sync:dallas', 'refused: -10')).toEqual({}); // another scheduler's own
    t += 1000;
    expect(said.toSay('sync:austin', 'WRONGTYPE')).toEqual({});
    t += 30_000;
    expect(said.toSay('sync:austin', 'WRONGTYPE')).toBeUndefined();
    t += 30_000;
    expect(said.toSay('sync:austin', 'WRONGTYPE')).toEqual({ again: { since: '2026-12-07T10:00:02.000Z', times: 3 } });
    said.keepOnly(new Set(['sync:dallas']));
    expect(said.toSay('sync:austin', 'WRONGTYPE')).toEqual({});
    // still failing, kept: said again, its while over (a minute since 10:00:01)
    expect(said.toSay('sync:dallas', 'refused: -10')).toEqual({
      again: { since: '2026-12-07T10:00:01.000Z', times: 2 },
    });
  });
});
