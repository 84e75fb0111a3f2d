// Routing predicates (feeds[].chatbots[].where): pure, no server.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileWhere, routeIndex, type RecordRoute, type Where } from '../../src/mapping/where.js';

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

describe('routeIndex', () => {
  // values that fold alike and apart, on a few paths (one nested), held alone, in lists, missing or null
  const value = fc.constantFrom(
    'Main',
    'main',
    'MA-IN',
    'North',
    'north_side',
    'North Side',
    42,
    '42',
    true,
    'true',
    '',
  );
  const path = fc.constantFrom('Office', 'Agent', 'List.Office', 'Type');
  const where: fc.Arbitrary<Where | undefined> = fc.option(
    fc.dictionary(path, fc.array(value, { maxLength: 3 }), { maxKeys: 3 }),
    { nil: undefined },
  );
  const field = fc.oneof(value, fc.array(value, { maxLength: 3 }), fc.constant(null), fc.constant(undefined));
  const record = fc
    .record({ Office: field, Agent: field, Type: field, inner: field })
    .map(({ inner, ...r }) => ({ ...r, List: { Office: inner } }));

  it('takes a record to the routes that each take it alone, in order (a route without tests asked itself)', () => {
    fc.assert(
      fc.property(
        fc.array(where, { maxLength: 8 }),
        fc.array(record, { maxLength: 10 }),
        fc.boolean(),
        (ws, rs, plain) => {
          const routes: Array<RecordRoute | undefined> = ws.map((w) => compileWhere(w));
          // (a route made elsewhere, without its tests: asked itself)
          if (plain && routes[0]) {
            const alone = routes[0];
            routes[0] = (r) => alone(r);
          }
          const index = routeIndex(routes);
          for (const r of rs) {
            const each = routes.flatMap((route, i) => (!route || route(r) ? [i] : []));
            expect(index(r)).toEqual(each);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
