import { describe, expect, it } from 'vitest';
import { canonicalFromListing, canonicalFromListItem, diffCanonical } from '../../src/listing/canonical.js';
import { fingerprintListing } from '../../src/listing/fingerprint.js';
import { listing, listItem } from '../sync/helpers/listings.js';

describe('canonical comparison', () => {
  it('finds a listing equal to the list item the service returns for it', () => {
    const l = listing('A1', {
      Images: ['https://img/1.jpg', 'https://img/2.jpg'],
      ExtensionColumn: [{ Key: 'Pool', value: 'yes' }],
      Latitude: 30.2672,
      Longitude: -97.7431,
      Description: 'Nice  house\n with a  yard ',
      HOAMonth: 120,
    });
    const item = listItem(1, l, { Description: 'Nice house with a yard', Bathrooms: '2.50', HOAMonth: '120.00' });
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(item))).toEqual([]);
  });

  it('treats "" as unset and 0 coordinates as no coordinate', () => {
    const l = listing('A1');
    const item = listItem(1, l, { State: '', LATITUDE: 0, LONGITUDE: 0, Tours: '  ' });
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(item))).toEqual([]);
  });

  it('tolerates coordinate noise below 1e-6 and not above', () => {
    const l = listing('A1', { Latitude: 30.2672, Longitude: -97.7431 });
    const close = listItem(1, l, { LATITUDE: 30.2672004 });
    const far = listItem(1, l, { LATITUDE: 30.2682 });
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(close))).toEqual([]);
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(far))).toEqual([
      { field: 'Latitude', old: 30.2682, new: 30.2672 },
    ]);
  });

  it('reports a changed price and a dropped image, old and new', () => {
    const l = listing('A1', { SalePrice: 360000, Images: ['a.jpg'] });
    const item = listItem(1, listing('A1', { Images: ['a.jpg', 'b.jpg'] }));
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(item))).toEqual([
      { field: 'Images', old: ['a.jpg', 'b.jpg'], new: ['a.jpg'] },
      { field: 'SalePrice', old: 350000, new: 360000 },
    ]);
  });

  it('parses Images and ExtensionColumn from their other string forms', () => {
    const l = listing('A1', {
      Images: ['a.jpg', 'b.jpg'],
      ExtensionColumn: [
        { Key: 'Pool', value: 'yes' },
        { Key: 'View', value: 'lake' },
      ],
    });
    const comma = listItem(1, l, { Images: 'a.jpg, b.jpg', ExtensionColumn: '{"Pool":"yes","View":"lake"}' });
    const pairs = listItem(1, l, { ExtensionColumn: 'Pool:yes;View:lake' });
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(comma))).toEqual([]);
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(pairs))).toEqual([]);
  });

  it('lets Price stand in for an empty SalePrice or RentPrice', () => {
    const sale = listing('A1', { SalePrice: 350000 });
    const rent = listing('R1', { SaleType: 'for_rent', SalePrice: undefined, RentPrice: 2100 });
    expect(
      diffCanonical(canonicalFromListing(sale), canonicalFromListItem(listItem(1, sale, { SalePrice: '' }))),
    ).toEqual([]);
    expect(
      diffCanonical(
        canonicalFromListing(rent),
        canonicalFromListItem(listItem(2, rent, { RentPrice: '', Price: '2100.00' })),
      ),
    ).toEqual([]);
  });

  it('never compares fields the list does not return, and skips ignored ones', () => {
    const l = listing('A1', { Location: 'Downtown', AreaUnit: 'Square Meters', DaysOnMarket: 9 });
    const item = listItem(1, listing('A1'));
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(item), new Set(['DaysOnMarket']))).toEqual([]);
    expect(diffCanonical(canonicalFromListing(l), canonicalFromListItem(item)).map((c) => c.field)).toEqual([
      'DaysOnMarket',
    ]);
  });

  it('keeps a non-numeric string apart from any number', () => {
    const l = listing('A1');
    expect(
      diffCanonical(canonicalFromListing(l), canonicalFromListItem(listItem(1, l, { Bedrooms: 'three' }))),
    ).toEqual([{ field: 'Bedrooms', old: 'three', new: 3 }]);
  });
});

describe('fingerprint', () => {
  it('changes with a field the list does not return and not with cosmetic differences', () => {
    const base = fingerprintListing(listing('A1', { Description: 'a b' }));
    expect(fingerprintListing(listing('A1', { Description: ' a  b ' }))).toBe(base);
    expect(fingerprintListing(listing('A1', { Description: 'a b', Location: 'Downtown' }))).not.toBe(base);
    expect(fingerprintListing(listing('A1', { Description: 'a b', AreaUnit: 'Square Meters' }))).not.toBe(base);
  });

  it('leaves ignored fields out', () => {
    const ignore = new Set(['DaysOnMarket']);
    expect(fingerprintListing(listing('A1', { DaysOnMarket: 1 }), ignore)).toBe(
      fingerprintListing(listing('A1', { DaysOnMarket: 2 }), ignore),
    );
  });
});
