// Cron patterns and time zones in config, checked when the config loads: a pattern the job
// scheduler would refuse (`0 25 * * *`) or an unknown zone is a config error with its line, not a
// worker that fails at start.
import { createRequire } from 'node:module';
import type * as cronParserModule from 'cron-parser';
import { z } from 'zod';
import { nearest } from '../format/nearest.js';

/**
 * cron-parser (with luxon under it, ~12 ms of CPU to load), required when a pattern is first
 * checked, not by every command whose config has no schedule (a sync run from cron); a synchronous
 * require (cron-parser is CommonJS) keeps the config's checks synchronous. One that cannot be
 * loaded throws there, and the config does not load.
 */
let cronParser: typeof cronParserModule | undefined;
const parser = (): (typeof cronParserModule)['CronExpressionParser'] =>
  (cronParser ??= createRequire(import.meta.url)('cron-parser')).CronExpressionParser;

/** Most patterns and zones remembered: config checks repeat them across a fleet's feeds and reloads. */
const MAX_REMEMBERED = 10_000;

/** `compute`, once per key: a fleet's feeds share a few patterns and zones, and some checks cost ms. */
function remembered<A extends unknown[], T>(
  keyOf: (...args: A) => string,
  compute: (...args: A) => T,
): (...args: A) => T {
  const seen = new Map<string, { value: T }>();
  return (...args) => {
    const key = keyOf(...args);
    let hit = seen.get(key);
    if (!hit) {
      hit = { value: compute(...args) };
      if (seen.size >= MAX_REMEMBERED) seen.clear();
      seen.set(key, hit);
    }
    return hit.value;
  };
}

/** A time zone Node knows (IANA name, or UTC); an unknown one names the nearest known zone. */
export const TimeZone = z.string().superRefine((tz, ctx) => {
  if (isTimeZone(tz)) return;
  const near = nearest(tz, [...Intl.supportedValuesOf('timeZone'), 'UTC'], 4);
  ctx.addIssue({
    code: 'custom',
    message: `"${tz}" is not a time zone${near ? `; did you mean ${near}?` : '; use an IANA name like America/Chicago or UTC'}`,
  });
});

function isTimeZone(tz: string): boolean {
  return knownZone(tz);
}

const knownZone = remembered(
  (tz: string) => tz,
  (tz: string) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      return true;
    } catch {
      return false; // (Intl refuses a zone it does not know: that is the answer)
    }
  },
);

/** A cron pattern (5 fields, or 6 with seconds first) the job scheduler accepts. */
export const CronPattern = z.string().superRefine((pattern, ctx) => {
  const problem = cronProblem(pattern);
  if (problem)
    ctx.addIssue({
      code: 'custom',
      message: `"${pattern}" is not a cron pattern: ${problem} (minute hour day-of-month month day-of-week, e.g. "*/10 * * * *")`,
    });
});

/** What is wrong with a pattern, if anything (remembered per pattern). */
const cronProblem = remembered(
  (pattern: string) => pattern,
  (pattern: string) =>
    plainCronPattern(pattern) ? undefined : (fieldCountProblem(pattern) ?? cronParserProblem(pattern)),
);

/**
 * A pattern of fewer than 5 fields (a macro such as `@daily` aside). cron-parser takes one: it pads
 * it with `*` in front, so `*\/10 * * *` (a field left out) would run every minute of every tenth
 * hour and `5` every minute of Fridays, each without a word. More than 6 cron-parser refuses itself.
 */
function fieldCountProblem(pattern: string): string | undefined {
  const trimmed = pattern.trim();
  const fields = trimmed ? trimmed.split(/\s+/) : [];
  if (trimmed.startsWith('@') || fields.length >= 5) return undefined;
  return `it has ${fields.length} field(s), not 5 (or 6 with seconds first)`;
}

/** Each field's values (seconds, minutes, hours, day of month, month, day of week: 0 and 7 are Sunday). */
export const FIELD_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0, 59],
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];
/** one item of a field's list: `*`, `*` with a step, a number, or a range of two */
const PLAIN_ITEM = /^(?:\*(?:\/(\d{1,2}))?|(\d{1,2})(?:-(\d{1,2}))?)$/;

/**
 * Whether a pattern is of the plain kind cron-parser always accepts, so it is accepted without
 * loading cron-parser: with luxon and the locale data its first date reads, about 40 ms of CPU at
 * the start of every command whose config has a schedule (a `sync` from cron included), for the
 * patterns nearly every config has. Each field is one item (`*`, `*` with a step, a number, a range
 * of two) or a list of numbers in rising order (cron-parser refuses a value twice, 0 and 7 being
 * both Sunday), within the field's values, a day of month at most 28 (in every month). Anything
 * else is cron-parser's to judge (`cronParserProblem`); test/config/cron.test.ts holds this to it.
 */
export function plainCronPattern(pattern: string): boolean {
  const fields = pattern.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return false;
  const ranges = FIELD_RANGES.slice(6 - fields.length);
  return fields.every((field, i) => {
    const [min, max] = ranges[i]!;
    const top = i === ranges.length - 3 ? 28 : max; // (day of month: 29-31 are not in every month)
    const m = PLAIN_ITEM.exec(field);
    if (m) {
      const [, step, from, to] = m;
      if (step !== undefined) return Number(step) >= 1 && Number(step) <= max;
      if (from === undefined) return true; // `*`
      return Number(from) >= min && Number(from) <= Number(to ?? from) && Number(to ?? from) <= top;
    }
    const values = field.split(',').map((v) => (/^\d{1,2}$/.test(v) ? Number(v) : NaN));
    const last = i === ranges.length - 1 && values.includes(0) ? Math.min(top, 6) : top;
    return values.every((v, j) => v >= min && v <= last && (j === 0 || v > values[j - 1]!));
  });
}

/** What cron-parser finds wrong with a pattern (its parse and its next run), if anything. */
export function cronParserProblem(pattern: string): string | undefined {
  const cron = parser(); // (outside the try: a parser that cannot be loaded is no pattern's problem)
  try {
    cron.parse(pattern, { tz: 'UTC' }).next();
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // cron-parser says "Constraint error, got value 25 expected range 0-23"
    return message
      .replace(/^Constraint error, got value (\S+) expected range (\S+)$/, 'value $1 is outside $2')
      .replace(/^Validation error, /, '');
  }
}

/**
 * The shortest time between two runs of a valid pattern, in seconds, over its next 200 runs (enough
 * to see every gap of a pattern that repeats within a day, and most within a week). Remembered per
 * pattern and zone: 200 steps of cron-parser cost about 50 ms, and a fleet's feeds share patterns.
 */
export const shortestIntervalSeconds = remembered(
  (pattern: string, tz?: string) => `${tz ?? 'UTC'}\u0000${pattern}`,
  measureShortestInterval,
);

function measureShortestInterval(pattern: string, tz?: string): number {
  const it = parser().parse(pattern, { tz: tz ?? 'UTC', currentDate: new Date('2026-01-05T00:00:00Z') });
  const runs: number[] = [];
  for (let i = 0; i <= 200 && it.hasNext(); i++) runs.push(it.next().getTime());
  // in order of time: around a daylight-saving change cron-parser can step back (Lord Howe's
  // half-hour fall-back gave a run 60 s before the one it had just given)
  runs.sort((a, b) => a - b);
  let shortest = Infinity;
  for (let i = 1; i < runs.length; i++)
    if (runs[i]! > runs[i - 1]!) shortest = Math.min(shortest, (runs[i]! - runs[i - 1]!) / 1000);
  return shortest;
}

/**
 * The shortest gap between runs of a valid pattern when it is under `minSeconds`, else undefined.
 * A pattern of five fields runs at second 0 of whole minutes, so its runs are at least 60 s apart:
 * against a minimum of 60 s or less it needs no stepping through its runs.
 */
export function intervalUnder(pattern: string, tz: string | undefined, minSeconds: number): number | undefined {
  if (minSeconds <= 60 && pattern.trim().split(/\s+/).length === 5) return undefined;
  const every = shortestIntervalSeconds(pattern, tz);
  return every < minSeconds ? every : undefined;
}
