// The change of display rules a run finds (src/sync/settle/rule-change.ts): pure.
import { describe, expect, it } from 'vitest';
import { resolveDisplay } from '../../src/mapping/display-config.js';
import { rejudgeWindows, ruleChangeOf, rulesFingerprint } from '../../src/sync/settle/rule-change.js';

const idx = resolveDisplay(undefined, 'reso');

describe('ruleChangeOf', () => {
  it('the same rules stored: no change, nothing to store', () => {
    const stored = ruleChangeOf(undefined, idx, false).store;
    expect(ruleChangeOf(stored, resolveDisplay({}, 'reso'), true)).toEqual({
      rules: [],
      store: stored,
      differs: false,
    });
  });

  it('none stored: no change for a lane with no listing; every rule in force for one that holds listings', () => {
    expect(ruleChangeOf(undefined, idx, false).rules).toEqual([]);
    expect(ruleChangeOf(undefined, idx, true).rules.map((r) => [r.rule, r.from])).toEqual([
      ['MlgCanView', '(not recorded)'],
      ['InternetEntireListingDisplayYN', '(not recorded)'],
      ['IDXParticipationYN', '(not recorded)'],
      ['StandardStatus', '(not recorded)'],
      ['sold-window', '(not recorded)'],
    ]);
    // an internal feed applies no rule: nothing to count
    expect(ruleChangeOf(undefined, resolveDisplay(undefined, 'csv'), true).rules).toEqual([]);
  });

  it('names each rule whose terms changed, old → new; a soldDays change carries the days', () => {
    const stored = ruleChangeOf(undefined, resolveDisplay({ purpose: 'vow' }, 'reso'), false).store;
    const edited = resolveDisplay({ soldDays: 30, flags: { IDXParticipationYN: 'ACT_IDXOptInYN' } }, 'reso');
    const change = ruleChangeOf(stored, edited, true);
    expect(change.rules).toEqual([
      { rule: 'IDXParticipationYN', from: 'not applied', to: 'applied (read from ACT_IDXOptInYN)' },
      { rule: 'sold-window', from: 'soldDays 1095', to: 'soldDays 30' },
    ]);
    expect(change.soldDays).toEqual({ from: 1095, to: 30 });
    expect(change.differs).toBe(true);
  });

  it('an attribution edit changes no hide rule, but the stored rules are replaced', () => {
    const stored = ruleChangeOf(undefined, idx, false).store;
    const change = ruleChangeOf(stored, resolveDisplay({ attribution: 'By {ListAgentFullName}' }, 'reso'), true);
    expect(change.rules).toEqual([]);
    expect(change.differs).toBe(true);
  });

  it('a stored entry that does not read is taken as none', () => {
    expect(ruleChangeOf('not json', idx, true).rules.length).toBe(5);
    expect(ruleChangeOf('{"fingerprint":1}', idx, true).rules.length).toBe(5);
  });
});

describe('rulesFingerprint', () => {
  it('does not depend on the order the keys were written in', () => {
    const { purpose, soldDays, ...rest } = idx;
    expect(rulesFingerprint({ ...rest, soldDays, purpose })).toBe(rulesFingerprint(idx));
  });
});

describe('rejudgeWindows', () => {
  it('moves each stored window by the change of soldDays', () => {
    const stored = new Map([['A', '2025-03-31T00:00:00.000Z']]);
    expect([...rejudgeWindows(stored, { from: 30, to: 60 })]).toEqual([['A', '2025-04-30T00:00:00.000Z']]);
    expect([...rejudgeWindows(stored, { from: 30, to: 0 })]).toEqual([['A', '2025-03-01T00:00:00.000Z']]);
  });
});
