// The one masking function: by value, any length, any header name, URLs without userinfo and with
// secret query values masked, and nested report values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayUrl } from '../../src/feeds/source/http.js';
import { maskDeep, maskedJson, maskSecrets, maskUrl, registerSecret, registerSecretsIn } from '../../src/secrets.js';

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
    expect(maskUrl('https://someone:pw-url-6@h.test/feed?access_token=abc123xyz&page=2&api_key=zz')).toBe(
      'https://h.test/feed?access_token=[REDACTED]&page=2&api_key=[REDACTED]',
    );
  });

  it('displayUrl masks a path token, and a secret that is also a piece of the host does not make it throw', () => {
    registerSecret('pathtok-disp-2');
    registerSecret('hostpiece');
    expect(displayUrl('https://u:p@feeds.hostpiece.test/export/pathtok-disp-2/l.csv?page=2')).toBe(
      'https://feeds.[REDACTED].test/export/[REDACTED]/l.csv',
    );
  });

  it('masks strings deep inside a report, keeping its structure', () => {
    registerSecret('deep-secret-7');
    expect(maskDeep({ a: [{ b: 'x deep-secret-7 y' }], n: 3 })).toEqual({ a: [{ b: 'x [REDACTED] y' }], n: 3 });
  });
});

describe('maskedJson (the change log serializes once when no secret can be in a line)', () => {
  // secrets whose JSON form differs from their text (quotes, backslashes, control and line
  // separator characters), one that is a feed's only, and plain ones
  const SECRETS = ['q"uo\\te-11', 'ctl\u0001\n-12', 'ls\u2028-13', 'plain-secret-14', 'ünï-15'];
  const SCOPED = 'feed-only-16';
  for (const s of SECRETS) registerSecret(s);
  registerSecret(SCOPED, 'feed-a');
  const piece = fc.constantFrom(
    ...SECRETS,
    SCOPED,
    ...SECRETS.map((s) => s.slice(0, 3)),
    '"',
    '\\',
    'x',
    ' ',
    '\u2028',
    'plain',
    '-14',
    ':',
  );
  const text = fc.array(piece, { maxLength: 5 }).map((ps) => ps.join(''));
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.constant(null),
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(text, tie('v'), { maxKeys: 3 }),
    ),
  })).v;

  it('gives JSON.stringify(maskDeep(value)), whatever the value holds, for any scope', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(undefined, 'feed-a', 'feed-b'), (v, scope) => {
        expect(maskedJson(v, scope)).toBe(JSON.stringify(maskDeep(v, scope)));
      }),
      { numRuns: 500 },
    );
  });

  it('masks a secret that JSON escapes', () => {
    expect(maskedJson({ reason: `was ${SECRETS[0]} and ${SECRETS[1]}` })).toBe(
      '{"reason":"was [REDACTED] and [REDACTED]"}',
    );
  });
});
