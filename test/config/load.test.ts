import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { redactSecrets } from '../../src/log.js';

const base = `
api:
  baseUrl: embedded
  secretKey: \${SECRET}
  sessionKey: \${SESSION:-session-default}
redis:
  url: \${REDIS_URL:-redis://127.0.0.1:6379}
chatbots:
  - serialNumber: SN-1
feeds:
  - name: austin
    chatbot: SN-1
    source: { kind: csv, path: feeds/austin.csv }
`;

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('parseConfig', () => {
  it('interpolates ${ENV} and ${ENV:-default} and applies the documented defaults', () => {
    const cfg = parseConfig(base, 'f.yaml', { SECRET: 'sk-live-123456' });
    expect(cfg.api.secretKey).toBe('sk-live-123456');
    expect(cfg.api.sessionKey).toBe('session-default');
    expect(cfg.redis?.url).toBe('redis://127.0.0.1:6379');
    expect(cfg.api.concurrency).toBe(8);
    expect(cfg.api.ratePerSecond).toBe(20);
    const feed = cfg.feeds[0]!;
    expect(feed.keyBy).toBe('MLSNumber');
    expect(feed.deletes).toEqual({ mode: 'mirror', maxFraction: 0.25, maxCount: 500, graceHours: 0, batchSize: 100 });
    expect(feed.source).toMatchObject({ kind: 'csv', delimiter: ',', encoding: 'utf8' });
  });

  it('a secret of digits through ${VAR} stays text; a number field given ${VAR} gets the number', () => {
    const text = base.replace(
      'baseUrl: embedded',
      'baseUrl: embedded\n  timeoutMs: ${TIMEOUT}\n  retries: ${RETRIES:-2}',
    );
    const cfg = parseConfig(text, 'f.yaml', { SECRET: '0012345678', TIMEOUT: '5000' });
    expect(cfg.api.secretKey).toBe('0012345678');
    expect(cfg.api.timeoutMs).toBe(5000);
    expect(cfg.api.retries).toBe(2);
  });

  it('registers secrets so they are masked in any text', () => {
    parseConfig(base, 'f.yaml', { SECRET: 'sk-live-987654' });
    expect(redactSecrets('Authorization: sk-live-987654')).toBe('Authorization: [REDACTED]');
  });

  it('a ${VAR} in a URL path, or named as a secret, is masked; one in a host, a query or a number field is not', () => {
    const text = base.replace(
      'source: { kind: csv, path: feeds/austin.csv }',
      [
        'source:',
        '      kind: csv',
        '      url: "https://${FEED_HOST}/export/${EXPORT_ID}/listings.csv?page=${PAGE_NO}"',
        '      headers: { X-Broker: "${BROKER_REF}" }',
        '    deadlineMinutes: ${DEADLINE}',
        '    schedule: { cron: "*/5 * * * *", tz: "${MLS_API_TOKEN}" }',
      ].join('\n'),
    );
    // (the time zone is not one: the config is invalid, and the values seen before are masked all the same)
    expect(() =>
      parseConfig(text, 'f.yaml', {
        SECRET: 'sk-live-555000',
        FEED_HOST: 'feeds.example.test',
        EXPORT_ID: 'pathtok-91a7c',
        PAGE_NO: '37',
        BROKER_REF: 'hdr-ref-4411',
        DEADLINE: '45',
        MLS_API_TOKEN: 'named-tok-7d2e',
      }),
    ).toThrow(ConfigError);
    expect(redactSecrets('GET https://feeds.example.test/export/pathtok-91a7c/listings.csv?page=37')).toBe(
      'GET https://feeds.example.test/export/[REDACTED]/listings.csv?page=37',
    );
    expect(redactSecrets('tz named-tok-7d2e, waited 45 min')).toBe('tz [REDACTED], waited 45 min');
  });

  it("a short ${VAR} in a URL's path (a region, a year) is not taken for a token: masking it would blank that word in every line", () => {
    const text = base.replace(
      'source: { kind: csv, path: feeds/austin.csv }',
      'source: { kind: csv, url: "https://h.test/${REGION}/${YEAR}/listings.csv" }',
    );
    parseConfig(text, 'f.yaml', { SECRET: 'sk-live-555002', REGION: 'tx', YEAR: '2026' });
    expect(redactSecrets('tx: 12 listings at 2026-12-07T04:00:00Z')).toBe('tx: 12 listings at 2026-12-07T04:00:00Z');
  });

  it('a ${VAR} given its default is not taken for a secret: the default is written in the config', () => {
    const text = base.replace(
      'source: { kind: csv, path: feeds/austin.csv }',
      'source: { kind: csv, url: "https://h.test/export/${EXPORT_REF:-public-demo-ref}/l.csv" }',
    );
    parseConfig(text, 'f.yaml', { SECRET: 'sk-live-555001' });
    expect(redactSecrets('https://h.test/export/public-demo-ref/l.csv')).toBe(
      'https://h.test/export/public-demo-ref/l.csv',
    );
  });

  it('names every unset environment variable', () => {
    const err = configError(() => parseConfig(base, 'f.yaml', {}));
    expect(err.message).toContain('SECRET');
    expect(err.message).not.toContain('SESSION,');
  });

  it('reports schema errors with their path and line in the file', () => {
    const bad = base.replace('chatbot: SN-1', 'chatbot: SN-1\n    keyBy: ListingId');
    const err = configError(() => parseConfig(bad, 'f.yaml', { SECRET: 'x-secret' }));
    expect(err.message).toContain('f.yaml:13: feeds[0].keyBy "ListingId" must be one of MLSNumber, URL');
  });

  it('rejects unknown keys (typos) and duplicate feed names', () => {
    const typo = base.replace('concurrency', 'x').replace('baseUrl: embedded', 'baseUrl: embedded\n  concurency: 4');
    expect(configError(() => parseConfig(typo, 'f.yaml', { SECRET: 'x-secret' })).message).toContain('concurency');
    const dup = base + `  - name: austin\n    chatbot: SN-1\n    source: { kind: csv, path: b.csv }\n`;
    expect(configError(() => parseConfig(dup, 'f.yaml', { SECRET: 'x-secret' })).message).toContain(
      'duplicate feed name austin',
    );
  });

  it('reports YAML syntax errors with a line', () => {
    const err = configError(() => parseConfig('api: [unclosed', 'f.yaml', {}));
    expect(err.message).toMatch(/f\.yaml:1: /);
  });
});
