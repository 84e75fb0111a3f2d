// Rule changes are changes (issue 54 point 3; docs/display-rules.md, "When the rules change"), end to
// end over HTTP: a RESO test server, the emulator as the chatbot. A removal by a display rule goes
// outside the delete limits when the record changed on its own; when the rules changed (a new default
// after an upgrade, a config edit), the run's removals by the changed rule count toward
// deletes.maxCount / maxFraction, the run says which rule changed, and --force accepts them.
import { describe, expect, it } from 'vitest';
import { exitForOutcome, EXIT } from '../../src/cli/exit.js';
import { RULES_NAMESPACE } from '../../src/sync/model/state-names.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { flaggedFeed, flaggedRecord } from '../helpers/flagged-reso.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { expectUpgradeStopSaid } from './helpers/upgrade-stop.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync({
  onEach: (t, e) => {
    te = t;
    env = e;
  },
});

const resoFeed = (url: string, patch: Record<string, unknown> = {}) => flaggedFeed(url, SN, patch);

const heldKeys = async () => (await te.listings(SN)).map((l) => l.MLSNumber).sort();
const pad = (i: number) => String(i).padStart(2, '0');

/**
 * 25 listings, 8 of them (32 %) Coming Soon: shown by a feed without rules (internal), hidden by
 * idx's default statuses. The first run writes all 25 under purpose internal.
 */
async function upgraded(patch: Record<string, unknown> = {}) {
  const records = Array.from({ length: 25 }, (_, i) =>
    flaggedRecord(i + 1, i < 8 ? { StandardStatus: 'Coming Soon' } : {}),
  );
  const s = emulator.closeAfterTest(await startResoServer({ records }));
  const before = resoFeed(s.url, { display: { purpose: 'internal' }, ...patch });
  const first = await env.sync(te, before);
  expect(first.outcome, first.message).toBe('ok');
  expect((await heldKeys()).length).toBe(25);
  return { s, after: resoFeed(s.url, patch) };
}

describe('an upgrade whose new default rules would remove 32 % of the listings', () => {
  it('a store written before rules were kept: the full pull stops at the delete limits, says why, exits with the guard status; --force removes them', async () => {
    const { after } = await upgraded();
    // the store as a version before this change left it: no rules recorded
    await env.store.delete(RULES_NAMESPACE, ['mls']);

    const held = await env.sync(te, after, { full: true });
    expect(held.outcome, held.message).toBe('guard');
    expect(exitForOutcome(held.outcome)).toBe(EXIT.guard);
    expect(held.counts.deleted).toBe(0);
    expect((await heldKeys()).length).toBe(25);
    expect(held.guard.ruleChange).toEqual({
      rules: expect.arrayContaining([
        {
          rule: 'StandardStatus',
          from: '(not recorded)',
          to: 'statuses Active, Active Under Contract, Pending, Closed',
        },
      ]),
      removals: 8,
      keys: ['FL-01', 'FL-02', 'FL-03', 'FL-04', 'FL-05'],
      held: true,
    });
    expectUpgradeStopSaid(formatSyncReport(held));

    // the rules were not stored: the next run asks again
    const again = await env.sync(te, after, { full: true });
    expect(again.outcome).toBe('guard');
    expect((await heldKeys()).length).toBe(25);

    const forced = await env.sync(te, after, { full: true, force: true });
    expect(forced.outcome, forced.message).toBe('ok');
    expect(forced.guard.outcome).toBe('forced');
    expect(forced.deletedByReason).toEqual({ 'rule:StandardStatus': 8 });
    expect(await heldKeys()).toEqual(Array.from({ length: 17 }, (_, i) => `FL-${pad(i + 9)}`));

    // applied and stored: the next run is no change of rules
    const next = await env.sync(te, after, { full: true });
    expect(next.outcome, next.message).toBe('ok');
    expect(next.guard.ruleChange).toBeUndefined();
    expect(next.counts.deleted).toBe(0);
  });

  it('a config edit (purpose internal → the idx default) is a change of rules too; deletes.mode keep holds its removals at the limits as well', async () => {
    const { after } = await upgraded({ deletes: { mode: 'keep', maxFraction: 0.25 } });
    const held = await env.sync(te, after, { full: true });
    expect(held.outcome, held.message).toBe('guard');
    expect(held.guard.ruleChange?.rules.find((r) => r.rule === 'StandardStatus')).toEqual({
      rule: 'StandardStatus',
      from: 'not applied',
      to: 'statuses Active, Active Under Contract, Pending, Closed',
    });
    expect((await heldKeys()).length).toBe(25);
    const forced = await env.sync(te, after, { full: true, force: true });
    expect(forced.deletedByReason).toEqual({ 'rule:StandardStatus': 8 });
    expect((await heldKeys()).length).toBe(17);
  });

  it('a change of rules within the limits goes, and the run says which rule changed and what it removed', async () => {
    const records = Array.from({ length: 10 }, (_, i) =>
      flaggedRecord(i + 1, i < 2 ? { StandardStatus: 'Pending' } : {}),
    );
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    await env.sync(te, resoFeed(s.url));
    const edited = resoFeed(s.url, { display: { statuses: ['Active'] } });
    const report = await env.sync(te, edited, { full: true });
    expect(report.outcome, report.message).toBe('ok');
    expect(report.deletedByReason).toEqual({ 'rule:StandardStatus': 2 });
    expect(report.guard.ruleChange).toMatchObject({ removals: 2, keys: ['FL-01', 'FL-02'], held: false });
    expect(report.message).toMatch(
      /StandardStatus: statuses Active, Active Under Contract, Pending, Closed → statuses Active\): 2 removal\(s\)/,
    );
  });
});

describe('a record that changes on its own to a hidden state', () => {
  it('is still removed at once, outside the limits, when the rules did not change', async () => {
    const records = Array.from({ length: 4 }, (_, i) => flaggedRecord(i + 1));
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    const feed = resoFeed(s.url);
    await env.sync(te, feed);
    // 2 of 4 (50 %), past deletes.maxFraction 0.25
    s.touch('F-01', { StandardStatus: 'Withdrawn' });
    s.touch('F-02', { InternetEntireListingDisplayYN: false });
    const report = await env.sync(te, feed, { full: true });
    expect(report.outcome, report.message).toBe('ok');
    expect(report.guard.ruleChange).toBeUndefined();
    expect(report.deletedByReason).toEqual({ 'rule:StandardStatus': 1, 'rule:InternetEntireListingDisplayYN': 1 });
    expect(await heldKeys()).toEqual(['FL-03', 'FL-04']);
  });
});

describe('a config edit of display.soldDays', () => {
  const at = (iso: string) => () => new Date(iso);

  it('re-judges the stored sold windows at the next run, an incremental pull that brings nothing new', async () => {
    // (the Closed record is the oldest: an incremental pull from the mark, the newest one's time, does not send it again)
    const records = [
      flaggedRecord(1, { StandardStatus: 'Closed', CloseDate: '2025-03-01' }),
      ...Array.from({ length: 8 }, (_, i) => flaggedRecord(i + 2)),
    ];
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    const first = await env.sync(te, resoFeed(s.url, { display: { soldDays: 90 } }), {
      now: at('2025-03-10T12:00:00Z'),
    });
    expect(first.counts.created).toBe(9);

    // 30 days: the window of FL-01 ended on 2025-03-31; the record is not sent again
    const lowered = await env.sync(te, resoFeed(s.url, { display: { soldDays: 30 } }), {
      now: at('2025-04-05T00:00:00Z'),
    });
    expect(lowered.outcome, lowered.message).toBe('ok');
    expect(lowered.source.mode).toBe('incremental');
    expect(lowered.counts.feedRecords).toBeLessThan(9);
    expect(lowered.deletedByReason).toEqual({ 'rule:sold-window': 1 });
    expect(lowered.guard.ruleChange?.rules).toEqual([{ rule: 'sold-window', from: 'soldDays 90', to: 'soldDays 30' }]);
    expect(await heldKeys()).not.toContain('FL-01');
  });

  it('raised: a listing shown again by its record is kept until the new window ends', async () => {
    const records = [flaggedRecord(1), flaggedRecord(2, { StandardStatus: 'Closed', CloseDate: '2025-03-01' })];
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    await env.sync(te, resoFeed(s.url, { display: { soldDays: 30 } }), { now: at('2025-03-10T12:00:00Z') });
    // 60 days: the stored window moves from 2025-03-31 to 2025-04-30
    const raised = resoFeed(s.url, { display: { soldDays: 60 } });
    const inside = await env.sync(te, raised, { now: at('2025-04-05T00:00:00Z'), full: true });
    expect(inside.outcome, inside.message).toBe('ok');
    expect(inside.counts.deleted).toBe(0);
    const later = await env.sync(te, raised, { now: at('2025-04-10T00:00:00Z') });
    expect(later.counts.deleted).toBe(0);
    const past = await env.sync(te, raised, { now: at('2025-05-01T00:00:00Z') });
    expect(past.deletedByReason).toEqual({ 'rule:sold-window': 1 });
  });

  it('raised on incremental pulls (the rules not stored yet): a record read again is judged once by the new window, not twice', async () => {
    const records = [flaggedRecord(1), flaggedRecord(2, { StandardStatus: 'Closed', CloseDate: '2025-03-01' })];
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    // (until a full pull stores the new rules, removals by sold-window count toward the limits: 1 of 2 is within 0.5)
    const deletes = { maxFraction: 0.5 };
    await env.sync(te, resoFeed(s.url, { display: { soldDays: 30 }, deletes }), { now: at('2025-03-10T12:00:00Z') });
    const raised = resoFeed(s.url, { display: { soldDays: 60 }, deletes });
    // the Closed record comes again: its window, 2025-04-30, is the new rules'
    s.touch('F-02', { PublicRemarks: 'Sold in a week.' });
    const read = await env.sync(te, raised, { now: at('2025-04-05T00:00:00Z') });
    expect(read.source.mode).toBe('incremental');
    expect(read.counts.deleted).toBe(0);
    expect((await env.sync(te, raised, { now: at('2025-04-29T00:00:00Z') })).counts.deleted).toBe(0);
    const past = await env.sync(te, raised, { now: at('2025-05-01T00:00:00Z') });
    expect(past.deletedByReason).toEqual({ 'rule:sold-window': 1 });
  });
});
