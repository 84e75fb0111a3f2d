// What a rule reads of a record is read one way (rule-paths.ts) by every check that asks: feed drift's
// mapped fields, the CSV header's columns, the restricted-field check. A `per.from` (the field naming
// how often an amount is paid) is read as much as the amount: a feed without it takes every fee as
// monthly, so each check must see it.
import { describe, expect, it } from 'vitest';
import { columnsNeeded } from '../../src/mapping/columns-needed.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { resolveDisplay } from '../../src/mapping/display-config.js';
import { mappedFields } from '../../src/mapping/mapped-fields.js';
import { restrictedReads } from '../../src/mapping/restricted-fields.js';
import { rulePaths } from '../../src/mapping/rule-paths.js';

const HOA = { from: 'Fee', per: { from: 'FeeFrequency' } };

describe('the source paths of a rule with per', () => {
  it('rulePaths names the field per.from reads', () => {
    expect(rulePaths(MappingConfig.parse({ fields: { HOAMonth: HOA } }).fields.HOAMonth!)).toMatchObject({
      from: ['Fee'],
      per: ['FeeFrequency'],
    });
  });

  it("the reso preset's HOAMonth reads AssociationFeeFrequency (feed drift's mapped fields)", () => {
    const hoa = mappedFields(MappingConfig.parse({ preset: 'reso' })).filter((m) => m.usedBy === 'HOAMonth');
    expect(hoa.map((m) => m.field)).toEqual(['AssociationFee', 'AssociationFeeFrequency']);
  });

  it("a CSV feed's own per rule needs its period's column in the header", () => {
    const needs = columnsNeeded(MappingConfig.parse({ fields: { MLSNumber: 'MLS', HOAMonth: HOA } }));
    expect(needs).toContainEqual({ usedBy: 'HOAMonth (its period)', anyOf: ['FeeFrequency'] });
  });

  it('a per.from that names a restricted field is a restricted read', () => {
    const mapping = MappingConfig.parse({ fields: { HOAMonth: { from: 'Fee', per: { from: 'PrivateRemarks' } } } });
    const reads = restrictedReads(mapping, resolveDisplay({ attribution: 'Courtesy of {ListOfficeName}' }, 'reso'));
    expect(reads.map((r) => [r.rule, r.field])).toEqual([['mapping.fields.HOAMonth', 'PrivateRemarks']]);
  });
});
