// A run as the alert rules see it, for the rule tests: a good full run of 100 valid records at `at`,
// with `patch` over it.
import type { RunObservation } from '../../src/alerts/rules.js';

export function observationAt(at: Date): (patch?: Partial<RunObservation>) => RunObservation {
  return (patch = {}) => ({
    runId: 'r',
    at: at.toISOString(),
    outcome: 'ok',
    records: 100,
    valid: 100,
    rejected: 0,
    unmapped: [],
    ...patch,
  });
}
