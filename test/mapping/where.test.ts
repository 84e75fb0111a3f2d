// Routing predicates (feeds[].chatbots[].where): pure, no server.
import { describe, expect, it } from 'vitest';
import { compileWhere } from '../../src/mapping/where.js';

describe('compileWhere', () => {
  it('takes every record without a where', () => {
    expect(compileWhere(undefined)).toBeUndefined();
    expect(compileWhere({})).toBeUndefined();
  });

  it('compares as map compares lookups: case, spaces, underscores and hyphens aside (display and enum spellings)', () => {
    const route = compileWhere({ ListAgentMlsId: ['Agent_Ann'] })!;
    expect(route({ ListAgentMlsId: 'agent ann' })).toBe(true);
    expect(route({ ListAgentMlsId: 'AGENT-ANN' })).toBe(true);
    expect(route({ ListAgentMlsId: 'AgentAnn' })).toBe(true);
    expect(route({ ListAgentMlsId: 'Agent Bob' })).toBe(false);
    expect(route({})).toBe(false);
  });

  it('reads nested fields by a dotted path, numbers as text, lists by any of their values', () => {
    const route = compileWhere({ 'ListAgent.Office.Id': [42], 'Property.Type': ['Single Family Residence'] })!;
    expect(route({ ListAgent: { Office: { Id: '42' } }, Property: { Type: 'SingleFamilyResidence' } })).toBe(true);
    expect(
      route({ ListAgent: { Office: { Id: 42 } }, Property: { Type: ['Condominium', 'single family residence'] } }),
    ).toBe(true);
    // every field must match
    expect(route({ ListAgent: { Office: { Id: '42' } }, Property: { Type: 'Condominium' } })).toBe(false);
    expect(route({ ListAgent: { Office: { Id: '7' } }, Property: { Type: 'SingleFamilyResidence' } })).toBe(false);
  });
});
