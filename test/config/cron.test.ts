// The schedule-interval check's fast path (five-field patterns against a minimum of 60 s or less)
// agrees with stepping through the pattern's runs, for generated patterns and zones.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { intervalUnder, shortestIntervalSeconds } from '../../src/config/cron.js';
import { parseConfig } from '../../src/config/load.js';

const field = (max: number, from = 0) =>
  fc.oneof(
    fc.constant('*'),
    fc.integer({ min: 1, max: max - from }).map((n) => `*/${n}`),
    fc.integer({ min: from, max }).map(String),
    fc
      .tuple(fc.integer({ min: from, max }), fc.integer({ min: from, max }))
      .map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc
      .tuple(fc.integer({ min: from, max }), fc.integer({ min: from, max }))
      .map(([a, b]) => (a === b ? String(a) : `${a},${b}`)),
  );
const fiveFields = fc.tuple(field(59), field(23), field(28, 1), field(12, 1), field(6)).map((f) => f.join(' '));
const zone = fc.constantFrom(
  undefined,
  'UTC',
  'America/Chicago',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
);

describe('schedule intervals', () => {
  it('five fields against a minimum of 60 s or less: the fast path agrees with stepping through the runs', () => {
    fc.assert(
      fc.property(fiveFields, zone, fc.integer({ min: 1, max: 60 }), (pattern, tz, min) => {
        const stepped = shortestIntervalSeconds(pattern, tz);
        expect(intervalUnder(pattern, tz, min)).toBe(stepped < min ? stepped : undefined);
      }),
      { numRuns: 60 },
    );
  });

  it('a daylight-saving change where cron-parser steps back does not make a negative interval', () => {
    // Lord Howe falls back half an hour on the first Sunday of April; found by the property above
    expect(shortestIntervalSeconds('1,0 * 1 4 0', 'Australia/Lord_Howe')).toBe(60);
    expect(intervalUnder('1,0 * 1 4 0', 'Australia/Lord_Howe', 120)).toBe(60);
  });

  it('six fields (seconds first) and minimums above a minute are stepped through', () => {
    expect(intervalUnder('*/5 * * * * *', undefined, 60)).toBe(5);
    expect(intervalUnder('*/10 * * * *', undefined, 900)).toBe(600);
    expect(intervalUnder('0 * * * *', 'America/Chicago', 900)).toBeUndefined();
  });

  it('a config of 300 feeds on a few patterns is checked, and one that runs every second is refused with its place', () => {
    const feeds = Array.from({ length: 300 }, (_, i) => ({
      name: `f${i}`,
      chatbot: `SN-${i % 30}`,
      source: { kind: 'csv', path: 'x.csv' },
      schedule: { cron: `${i % 60} */${1 + (i % 6)} * * *`, tz: 'America/Chicago' },
    }));
    const api = { baseUrl: 'http://127.0.0.1:1', secretKey: 'sk-test-0123456789', sessionKey: 'ss-test-0123456789' };
    expect(parseConfig(JSON.stringify({ api, feeds })).feeds).toHaveLength(300);
    feeds[7]!.schedule.cron = '* * * * * *';
    expect(() => parseConfig(JSON.stringify({ api, feeds }))).toThrow(
      /feeds\[7\]\.schedule\.cron|more often than worker\.minScheduleIntervalSeconds/,
    );
  });
});
