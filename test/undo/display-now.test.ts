// What undo may write back of a listing (src/undo/display-now.ts): the listing before the run, as
// the feed's display rules let it be shown now, which the key's last write says.
import { describe, expect, it } from 'vitest';
import type { ListingCreate } from '../../src/listing/schema.js';
import { resolveDisplay } from '../../src/mapping/display-config.js';
import { displayNow } from '../../src/undo/display-now.js';
import { listing as fixture } from '../sync/helpers/listings.js';

const before = {
  Address: '102 Oak Street',
  Location: 'Downtown',
  Latitude: 30.262,
  Longitude: -97.74,
  City: 'Austin',
  ExtensionColumn: [
    { Key: 'Attribution', value: 'Listing courtesy of Hill Country Realty' },
    { Key: 'privateremarks', value: 'SECRET-gate code 1234' },
  ],
};
const listing: ListingCreate = fixture('FL-02', before);

const { Address: _a, Location: _l, Latitude: _lat, Longitude: _lon, ...withoutAddress } = listing;

describe('displayNow', () => {
  it('leaves out what the last write withheld, and entries named for a restricted field', () => {
    const d = displayNow(resolveDisplay({}, 'reso'));
    d.note({
      op: 'update',
      key: 'FL-02',
      reason: 'fields',
      changes: [],
      withheldFields: ['Address', 'Location', 'Latitude', 'Longitude'],
    });
    const shown = d.shown('FL-02', listing);
    expect(shown).toEqual({
      listing: { ...withoutAddress, ExtensionColumn: [before.ExtensionColumn[0]] },
      withheld: ['Address', 'Location', 'Latitude', 'Longitude'],
    });
    expect(JSON.stringify(shown)).not.toContain('SECRET');
  });

  it('a later write that shows the address again decides; a later removal by rule is not written back', () => {
    const d = displayNow(resolveDisplay({}, 'reso'));
    d.note({ op: 'update', key: 'FL-02', reason: 'fields', changes: [], withheldFields: ['Address'] });
    d.note({ op: 'update', key: 'FL-02', reason: 'fields', changes: [] });
    expect(d.shown('FL-02', listing)).toMatchObject({ listing: { Address: '102 Oak Street' } });
    d.note({ op: 'delete', key: 'FL-02', reason: 'rule:InternetEntireListingDisplayYN' });
    expect(d.shown('FL-02', listing)).toEqual({
      hidden: 'a later run removed it by display rule InternetEntireListingDisplayYN',
    });
    // a delete the guard held back deleted nothing
    d.note({ op: 'update', key: 'FL-02', reason: 'fields', changes: [] });
    d.note({ op: 'delete', key: 'FL-02', reason: 'absent', withheld: true });
    expect(d.shown('FL-02', listing)).toMatchObject({ listing: { Address: '102 Oak Street' } });
  });

  it('an internal feed applies no rule: the address goes back; its own display.withhold still holds', () => {
    const d = displayNow(resolveDisplay({ purpose: 'internal', withhold: ['PrivateRemarks'] }, 'csv'));
    d.note({ op: 'update', key: 'FL-02', reason: 'fields', changes: [], withheldFields: ['Address'] });
    const shown = d.shown('FL-02', listing);
    expect(shown).toMatchObject({ listing: { Address: '102 Oak Street' } });
    expect(JSON.stringify(shown)).not.toContain('SECRET');
  });
});
