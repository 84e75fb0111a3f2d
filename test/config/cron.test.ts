// The schedule-interval check's fast path (five-field patterns against a minimum of 60 s or less)
// agrees with stepping through the pattern's runs, for generated patterns and zones; the pattern
// check's fast path (plain patterns accepted without loading cron-parser) accepts only what
// cron-parser accepts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cronParserProblem,
  FIELD_RANGES,
  intervalUnder,
  plainCronPattern,
  shortestIntervalSeconds,
} from '../../src/config/cron.js';
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

/**
 * A list item of any shape cron-parser reads or refuses, mostly of the plain shapes with numbers at
 * and just past the field's ends (steps of 0 included), else names, L, H, ?, steps of ranges.
 */
const anyItem = (lo: number, hi: number) => {
  const n = fc.integer({ min: lo - 1, max: hi + 1 });
  const step = fc.integer({ min: 0, max: hi + 2 });
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant('*') },
    { weight: 10, arbitrary: n.map(String) },
    { weight: 10, arbitrary: fc.tuple(n, n).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`) },
    { weight: 2, arbitrary: fc.tuple(n, n).map(([a, b]) => `${a}-${b}`) },
    { weight: 10, arbitrary: step.map((s) => `*/${s}`) },
    {
      weight: 3,
      arbitrary: fc.constantFrom('?', 'L', 'H', '', 'mon', 'jan', '05', '1L', '5#2', '**', '-1', '1-', '*/', '/5'),
    },
    { weight: 1, arbitrary: fc.tuple(n, n, step).map(([a, b, s]) => `${a}-${b}/${s}`) },
    { weight: 1, arbitrary: fc.tuple(n, step).map(([a, s]) => `${a}/${s}`) },
  );
};
const anyField = (lo: number, hi: number) =>
  fc.oneof(
    { weight: 6, arbitrary: anyItem(lo, hi) },
    {
      weight: 2,
      arbitrary: fc
        .uniqueArray(fc.integer({ min: lo - 1, max: hi + 1 }), { minLength: 2, maxLength: 3 })
        .map((v) => v.sort((a, b) => a - b).join(',')),
    },
    { weight: 2, arbitrary: fc.array(anyItem(lo, hi), { minLength: 2, maxLength: 3 }).map((items) => items.join(',')) },
  );
const anyPattern = fc.oneof(
  fc.tuple(...FIELD_RANGES.slice(1).map(([lo, hi]) => anyField(lo, hi))).map((f) => f.join(' ')),
  fc.tuple(...FIELD_RANGES.map(([lo, hi]) => anyField(lo, hi))).map((f) => f.join('  ')),
  fc.array(anyField(0, 12), { minLength: 3, maxLength: 7 }).map((f) => ` ${f.join(' ')} `),
);

describe('plain cron patterns (accepted without cron-parser)', () => {
  it('every pattern the fast path accepts, cron-parser accepts: generated patterns of every shape', () => {
    let plain = 0;
    fc.assert(
      fc.property(anyPattern, (pattern) => {
        if (!plainCronPattern(pattern)) return;
        plain++;
        expect(cronParserProblem(pattern), pattern).toBeUndefined();
      }),
      { numRuns: 3000 },
    );
    expect(plain).toBeGreaterThan(100); // (the property was tried on plain patterns, not only refused ones)
  });

  it('every item the fast path takes, alone in its field, cron-parser accepts: each field, every number, range and step', () => {
    FIELD_RANGES.forEach(([lo, hi], at) => {
      const items = ['*'];
      for (let s = 0; s <= hi + 1; s++) items.push(`*/${s}`);
      for (let a = lo - 1; a <= hi + 1; a++)
        for (let b = a; b <= hi + 1; b++) items.push(a === b ? `${a}` : `${a}-${b}`);
      for (const item of items) {
        const pattern = FIELD_RANGES.map((_, i) => (i === at ? item : '*')).join(' ');
        if (plainCronPattern(pattern)) expect(cronParserProblem(pattern), pattern).toBeUndefined();
      }
    });
  });

  it("takes the patterns configs use, and leaves cron-parser the rest, with cron-parser's words", () => {
    for (const p of ['0 2 * * *', '*/30 * * * *', '15 2 * * 1-5', '0 */6 * * *', '*/5 * * * * *', '0 0 28 2 *'])
      expect(plainCronPattern(p), p).toBe(true);
    for (const p of ['0 0 31 2 *', '0 0 L * *', '0 0 * * mon', '@daily', '0 25 * * *', '0 0 0 * * * *', '*/0 * * * *'])
      expect(plainCronPattern(p), p).toBe(false);
    expect(cronParserProblem('0 25 * * *')).toBe('value 25 is outside 0-23');
  });
});
