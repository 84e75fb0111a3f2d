// A listing holding U+FFFD (bytes not valid in the feed's encoding): found in any string of it, nested
// or not; counted with the first place and field; the warning names the encoding and the setting.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { countInvalidText, encodingOf, invalidTextField, invalidTextWarning } from '../../src/mapping/invalid-text.js';

/** a feed's source as the config schema gives it */
const sourceOf = (source: object) =>
  FeedConfig.parse({ name: 'a', chatbot: 'SN', source, mapping: { fields: { MLSNumber: 'MLSNumber' } } }).source;

describe('invalid text in a listing', () => {
  it('names the first field whose value holds U+FFFD, in strings, lists and objects', () => {
    expect(invalidTextField({ MLSNumber: 'A1', Address: '1 Oak St', Bedrooms: 3 })).toBeUndefined();
    expect(invalidTextField({ MLSNumber: 'A1', City: 'Caf\uFFFD', Address: 'Pi\uFFFDa' })).toBe('City');
    expect(invalidTextField({ Images: ['https://x.test/1.jpg', 'https://x.test/\uFFFD.jpg'] })).toBe('Images');
    expect(invalidTextField({ Agent: { Name: 'Jos\uFFFD' }, Bedrooms: null })).toBe('Agent');
  });

  it('names the field the rule by Object.entries names, for any object (its keys walked, no pair made each)', () => {
    const rule = (listing: object) =>
      Object.entries(listing).find(([, v]) => JSON.stringify(v)?.includes('\uFFFD'))?.[0];
    const text = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('\uFFFD', 'Caf\uFFFD', ''));
    const value = fc.oneof(
      text,
      fc.integer(),
      fc.constant(null),
      fc.array(text, { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 3 }), text, { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 8 }), (listing) => {
        expect(invalidTextField(listing)).toBe(rule(listing));
      }),
      { numRuns: 2000 },
    );
  });

  it('counts the listings, keeping the first one place and field; the place is asked for only once', () => {
    let asked = 0;
    const place = (p: string) => () => (asked++, p);
    let found = countInvalidText(undefined, { City: 'Austin' }, place('a:2'));
    expect(found).toBeUndefined();
    found = countInvalidText(found, { Address: 'Caf\uFFFD' }, place('a:3'));
    found = countInvalidText(found, { City: 'Pi\uFFFDa' }, place('a:4'));
    expect(found).toEqual({ records: 2, first: 'a:3', field: 'Address' });
    expect(asked).toBe(1);
  });

  it('says which encoding the feed was read with and what to set', () => {
    expect(encodingOf(sourceOf({ kind: 'csv', path: 'x.csv' }))).toBe('utf8');
    expect(encodingOf(sourceOf({ kind: 'csv', path: 'x.csv', encoding: 'latin1' }))).toBe('latin1');
    expect(encodingOf(sourceOf({ kind: 'xml', path: 'x.xml', recordPath: 'Listings.Listing' }))).toBe(
      'its declared encoding',
    );
    expect(invalidTextWarning({ records: 2, first: 'x.csv:2, record 0', field: 'Address' }, 'utf8')).toBe(
      '2 record(s) hold bytes that are not valid utf8 (read as U+FFFD; first: x.csv:2, record 0, Address): the file is in another encoding; set feeds[].source.encoding (csv: latin1 or windows-1252)',
    );
  });
});
