// Transforms of a mapping rule. Each takes one source value and returns the listing value, or throws
// TransformFailure with the rule that was broken (it becomes a validation issue of the record).
import type { TransformName, TransformSpec } from './config-schema.js';
import { displayWords, type AreaUnitName } from './lookup.js';

export class TransformFailure extends Error {}

export type Transform = (value: unknown) => unknown;

/** Transforms whose result depends on when the record is mapped, not only on the record. */
export const CLOCK_TRANSFORMS: ReadonlySet<TransformName> = new Set<TransformName>(['days-since']);

export function compileTransform(spec: TransformSpec, now: () => Date): Transform {
  const make = FACTORIES[spec.name];
  const fn = make(spec, now);
  // list values (repeated XML elements, RESO arrays) are transformed element by element, except by split
  return spec.name === 'split' ? fn : (v) => (Array.isArray(v) ? v.map(fn) : fn(v));
}

const FACTORIES: Record<TransformName, (spec: TransformSpec, now: () => Date) => Transform> = {
  trim: () => (v) => (typeof v === 'string' ? v.trim() : v),
  lowercase: () => (v) => (typeof v === 'string' ? v.toLowerCase() : v),
  uppercase: () => (v) => (typeof v === 'string' ? v.toUpperCase() : v),
  number: (spec) => numberParser(spec.locale, 'number'),
  money: (spec) => numberParser(spec.locale, 'money'),
  integer: (spec) => {
    const parse = numberParser(spec.locale, 'integer');
    return (v) => {
      const n = parse(v) as number;
      if (!Number.isInteger(n)) throw new TransformFailure('integer: not a whole number');
      return n;
    };
  },
  boolean: () => (v) => {
    if (typeof v === 'boolean') return v;
    const s = String(v).trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
    throw new TransformFailure('boolean: not yes/no, true/false or 1/0');
  },
  split: (spec) => {
    const sep = spec.separator ?? ',';
    return (v) => {
      const parts = Array.isArray(v) ? v.flatMap((x) => String(x).split(sep)) : String(v).split(sep);
      return parts.map((p) => p.trim()).filter((p) => p !== '');
    };
  },
  words: () => (v) => (typeof v === 'string' ? displayWords(v) : v),
  // a decimal where the listing wants a whole number (RESO's GarageSpaces 2.5)
  round: (spec) => rounder(Math.round, spec),
  floor: (spec) => rounder(Math.floor, spec),
  ceil: (spec) => rounder(Math.ceil, spec),
  'days-since': (_spec, now) => (v) => {
    const t = Date.parse(String(v));
    if (Number.isNaN(t)) throw new TransformFailure('days-since: not a date');
    return Math.max(0, Math.floor((now().getTime() - t) / 86_400_000));
  },
};

function rounder(fn: (n: number) => number, spec: TransformSpec): Transform {
  const parse = numberParser(spec.locale, spec.name);
  return (v) => fn(parse(v) as number);
}

const TRUE = new Set(['true', 'yes', 'y', '1', 't']);
const FALSE = new Set(['false', 'no', 'n', '0', 'f']);

const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

/** A locale's group and decimal separators ("de-DE" → "." and ","). */
export interface Separators {
  readonly group: string;
  readonly decimal: string;
}

/**
 * en-US's separators, the rule of a number without a locale: what {@link localeSeparators} answers
 * for en-US (test/mapping/transforms.test.ts holds them to it), known without asking Intl, whose
 * first number format loads ICU's number data (~20 ms of a start that compiles a mapping).
 */
export const EN_US_SEPARATORS: Separators = Object.freeze({ group: ',', decimal: '.' });

const separatorsCache = new Map<string, Separators>();

/** The separators of a locale, as Intl.NumberFormat writes 1,234,567.5 in it. */
export function localeSeparators(locale: string): Separators {
  const parts = new Intl.NumberFormat(locale).formatToParts(1234567.5);
  return {
    group: parts.find((p) => p.type === 'group')?.value ?? ',',
    decimal: parts.find((p) => p.type === 'decimal')?.value ?? '.',
  };
}

/** The separators of a number field's locale: en-US's without one. */
function separators(locale: string | undefined): Separators {
  if (locale === undefined || locale === 'en-US') return EN_US_SEPARATORS;
  let s = separatorsCache.get(locale);
  if (!s) {
    s = localeSeparators(locale);
    separatorsCache.set(locale, s);
  }
  return s;
}

/**
 * Numbers as feeds write them: "350000", "1,250,000", "$1,250,000", "1.250.000,00 €" (locale de-DE),
 * "1 250 000" (narrow no-break spaces of fr-FR). Currency symbols and codes around the number are dropped.
 */
function numberParser(locale: string | undefined, rule: string): Transform {
  const { group, decimal } = separators(locale);
  const plainDecimal = decimal === '.' && group !== '.';
  const groupRe = new RegExp(group.trim() === '' ? '[\\s\\u00a0\\u202f]' : escapeRe(group), 'g');
  return (v) => {
    if (typeof v === 'number') {
      if (Number.isFinite(v)) return v;
      throw new TransformFailure(`${rule}: not a number`);
    }
    if (typeof v !== 'string') throw new TransformFailure(`${rule}: not a number`);
    if (plainDecimal && PLAIN_NUMBER.test(v)) return Number(v);
    let s = v.trim().replace(/^[^\d+\-.,]+|[^\d.,]+$/g, '');
    s = s.replace(groupRe, '');
    if (decimal !== '.') s = s.replace(decimal, '.');
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(s)) throw new TransformFailure(`${rule}: not a number`);
    return Number(s);
  };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const TO_SQFT: Record<AreaUnitName, number> = { sqft: 1, sqm: 10.76391041671, acres: 43_560 };

/** An area from one unit to another, to two decimals. */
export function convertArea(v: number, from: AreaUnitName, to: AreaUnitName): number {
  return from === to ? v : Math.round(v * (TO_SQFT[from] / TO_SQFT[to]) * 100) / 100;
}

export function unitConverter(from: AreaUnitName, to: AreaUnitName): Transform {
  return (v) => {
    if (typeof v !== 'number') throw new TransformFailure(`unit ${from}→${to}: not a number`);
    return convertArea(v, from, to);
  };
}
