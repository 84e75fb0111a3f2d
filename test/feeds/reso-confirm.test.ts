// The confirmation queries' batching: every key asked once, no URL past MAX_URL, no more `or` terms
// than the vendor allows.
import { describe, expect, it } from 'vitest';
import { batches, MAX_URL } from '../../src/feeds/reso/reso-confirm.js';
import { keyFilters, queryUrl } from '../../src/feeds/reso/reso-query.js';
import { vendorProfile } from '../../src/feeds/vendors/registry.js';

const keys = Array.from({ length: 300 }, (_, i) => `LISTING-${String(i).padStart(6, '0')}-${'x'.repeat(i % 40)}`);

describe('confirmation batches', () => {
  it.each(['reso', 'mlsgrid'] as const)('%s: every key once, each URL within MAX_URL characters and the or-limit', (name) => {
    const profile = vendorProfile(name);
    const url = (field: string, values: string[]) => queryUrl('https://mls.example/odata', 'Property', { filter: keyFilters(profile, field, values)![0] });
    const out = [...batches([{ field: 'ListingId', values: keys }], url, profile.maxOrTerms ?? 50)];
    expect(out.flatMap(([, v]) => v)).toEqual(keys);
    for (const [field, values] of out) {
      expect(field).toBe('ListingId');
      expect(url(field, values).length).toBeLessThanOrEqual(MAX_URL);
      expect(values.length).toBeLessThanOrEqual(profile.maxOrTerms ?? 50);
    }
    expect(out.length).toBeGreaterThanOrEqual(300 / (profile.maxOrTerms ?? 50));
  });

  it('a key too long for any URL still goes, alone', () => {
    const long = 'K'.repeat(MAX_URL);
    const url = (field: string, values: string[]) => queryUrl('https://mls.example/odata', 'Property', { filter: values.map((v) => `${field} eq '${v}'`).join(' or ') });
    expect([...batches([{ field: 'ListingKey', values: ['A', long, 'B'] }], url)]).toEqual([
      ['ListingKey', ['A']],
      ['ListingKey', [long]],
      ['ListingKey', ['B']],
    ]);
  });
});
