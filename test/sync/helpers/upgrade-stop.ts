// What a run says when an upgrade's new default display rules would remove 8 of the 25 flagged
// listings (32 %) of test/helpers/flagged-reso.ts, past deletes.maxFraction 25 %, in a store that
// recorded no rules (issue 54's "done when"): the report's words, whether formatted in process
// (rule-change.emulator.test.ts) or printed by `feedsync sync` (rule-change.cli.test.ts).
import { expect } from 'vitest';

/** the report says which rule changed (from "not recorded"), what its removals are, the limit they pass, and how to accept them */
export function expectUpgradeStopSaid(text: string): void {
  expect(text).toMatch(
    /display rules changed since this feed's last run applied them \(.*StandardStatus: \(not recorded\) → statuses Active/,
  );
  expect(text).toMatch(
    /8 removal\(s\) by them \(FL-01, FL-02, FL-03, FL-04, FL-05, … 3 more\) count toward the delete limits/,
  );
  expect(text).toMatch(/8 of 25 remote listings \(32%\) exceed deletes\.maxFraction 25%/);
  expect(text).toMatch(/--force/);
}
