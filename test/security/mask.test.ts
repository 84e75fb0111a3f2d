// The one masking function: by value, any length, any header name, URLs without userinfo and with
// secret query values masked, and nested report values.
import { describe, expect, it } from 'vitest';
import { maskDeep, maskSecrets, maskUrl, registerSecret, registerSecretsIn } from '../../src/secrets.js';

describe('maskSecrets', () => {
  it('masks a registered secret by value wherever it stands, even when shorter than 4 characters', () => {
    registerSecret('k9');
    expect(maskSecrets('key=k9; again k9')).toBe('key=[REDACTED]; again [REDACTED]');
  });

  it('registers every header value of a config whatever the name, URL userinfo, secret query values and secret-named fields', () => {
    registerSecretsIn({
      feeds: [
        {
          source: {
            url: 'https://u-mask-1:p-mask-2@feeds.test/x.xml?access_token=q-mask-3&page=2',
            headers: { 'X-Api-Auth': 'h-mask-4' },
            auth: { clientId: 'public-id', clientSecret: 'c-mask-5' },
          },
        },
      ],
    });
    const text = 'u-mask-1 p-mask-2 q-mask-3 h-mask-4 c-mask-5 public-id page=2';
    expect(maskSecrets(text)).toBe('[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] public-id page=2');
    expect(maskSecrets(JSON.stringify({ h: 'Bearer h-mask-4' }))).not.toContain('h-mask-4');
    expect(maskSecrets(Buffer.from('u-mask-1:p-mask-2').toString('base64'))).toBe('[REDACTED]');
  });

  it('shows URLs without userinfo and with secret query values masked', () => {
    expect(maskUrl('https://someone:pw-url-6@h.test/feed?access_token=abc123xyz&page=2&api_key=zz')).toBe('https://h.test/feed?access_token=[REDACTED]&page=2&api_key=[REDACTED]');
  });

  it('masks strings deep inside a report, keeping its structure', () => {
    registerSecret('deep-secret-7');
    expect(maskDeep({ a: [{ b: 'x deep-secret-7 y' }], n: 3 })).toEqual({ a: [{ b: 'x [REDACTED] y' }], n: 3 });
  });
});
