// An undo is a run for the alert rules (failing streaks, guard), but it reads no feed: the feed's own
// conditions (rejected records, a valid-count drop, unmapped values) stay as they were, and it moves
// neither the last good sync nor the valid-count reference.
import { expect, it } from 'vitest';
import { AlertRules } from '../../src/alerts/config-schema.js';
import { afterRun, emptyState, transitions } from '../../src/alerts/rules.js';
import { observationAt } from './observation.js';

const rules = AlertRules.parse({});
const t0 = new Date('2026-11-25T10:00:00Z');
const run = observationAt(t0);

it('an undo keeps the feed’s open conditions and its references, and still counts toward failing and guard', () => {
  const sync = afterRun(emptyState(), run({ rejected: 50, unmapped: ['Status: Gone'] }), rules);
  const open = transitions(sync.state, sync.holding, t0).state;
  expect(Object.keys(open.open).sort()).toEqual(['rejected', 'unmapped']);

  const undo = afterRun(open, run({ at: '2026-11-25T11:00:00Z', records: 0, valid: 0, feedRead: false }), rules);
  const after = transitions(undo.state, undo.holding, t0);
  expect(after.notices).toEqual([]); // nothing resolved by a run that read no feed
  expect(after.state.lastGoodValid).toBe(open.lastGoodValid);
  expect(after.state.lastOkAt).toBe(open.lastOkAt);

  const guard = afterRun(
    open,
    run({
      outcome: 'guard',
      records: 0,
      valid: 0,
      feedRead: false,
      message: 'the change log did not keep all of run R',
    }),
    rules,
  );
  expect(guard.holding.get('guard')).toContain('the change log did not keep all of run R');
});
