import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const config = (mapping: string) => `api:
  baseUrl: embedded
  secretKey: s-key
  sessionKey: t-key
feeds:
  - name: f
    chatbot: SN-1
    source: { kind: csv, path: f.csv }
    mapping:
${mapping}
`;

function issues(text: string): string {
  try {
    parseConfig(text, 'feedsync.yaml', {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  return '';
}

describe('mapping config', () => {
  it('names an unknown preset, transform and listing field with their line and path', () => {
    const msg = issues(
      config(`      preset: zilow
      fields:
        Bedroms: Beds
        Bathrooms: { from: Baths, transform: [number, nope] }`),
    );
    expect(msg).toContain(
      'feedsync.yaml:10: feeds[0].mapping.preset "zilow" must be one of reso, zillow, listhub, mits, hotpads (did you mean zillow?)',
    );
    expect(msg).toContain(
      'feedsync.yaml:12: feeds[0].mapping.fields.Bedroms: not a listing field (did you mean Bedrooms?)',
    );
    expect(msg).toContain(
      'feedsync.yaml:13: feeds[0].mapping.fields.Bathrooms.transform[1].name "nope" must be one of trim, number, integer, money, boolean, split, lowercase, uppercase, days-since',
    );
  });

  it('refuses SerialNumber and unknown rule keys', () => {
    const msg = issues(
      config(`      fields:
        SerialNumber: X
        City: { form: Town }`),
    );
    expect(msg).toContain("feeds[0].mapping.fields.SerialNumber: SerialNumber is the feed's chatbot");
    expect(msg).toContain('feeds[0].mapping.fields.City.form is not a known key; did you mean from?');
  });

  it('accepts the shorthand, lists, transform arguments and defaults', () => {
    const cfg = parseConfig(
      config(`      preset: reso
      fields:
        City: Town
        Images: { from: [Photos, Pics], transform: { name: split, separator: "|" } }
        Description: null
      defaults: { CurrencySymbol: "€", AreaUnit: Square Meters }
      extension: [Foo.Bar]`),
      'feedsync.yaml',
      {},
    );
    expect(cfg.feeds[0]!.mapping).toEqual({
      preset: 'reso',
      fields: {
        City: { from: 'Town' },
        Images: { from: ['Photos', 'Pics'], transform: [{ name: 'split', separator: '|' }] },
        Description: null,
      },
      defaults: { CurrencySymbol: '€', AreaUnit: 'Square Meters' },
      extension: ['Foo.Bar'],
    });
  });
});
