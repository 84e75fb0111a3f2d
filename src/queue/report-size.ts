// What is kept of a report in Redis (job return values, run history): bounded whatever the feed held.
// A list longer than REPORT_LIST_ITEMS keeps its first items and records how many were left out under
// `omitted` beside it; a string keeps an excerpt. The full per-record detail lives in the change log,
// which its retention bounds.
import { excerpt } from '../errors.js';

export const REPORT_LIST_ITEMS = 50;
const REPORT_STRING_CHARS = 2000;

export function boundReport<T>(report: T): T {
  return bound(report, 0) as T;
}

function bound(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return excerpt(value, REPORT_STRING_CHARS);
  if (Array.isArray(value)) return value.slice(0, REPORT_LIST_ITEMS).map((v) => bound(v, depth + 1));
  if (!value || typeof value !== 'object' || depth > 12) return depth > 12 ? '…' : value;
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === 'function' && !(value instanceof Date)) return bound(json.call(value), depth);
  if (value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  const omitted: Record<string, number> = { ...((value as { omitted?: Record<string, number> }).omitted ?? {}) };
  for (const [k, v] of Object.entries(value)) {
    if (k === 'omitted') continue;
    if (Array.isArray(v) && v.length > REPORT_LIST_ITEMS) omitted[k] = (omitted[k] ?? 0) + v.length - REPORT_LIST_ITEMS;
    out[k] = bound(v, depth + 1);
  }
  if (Object.keys(omitted).length) out.omitted = omitted;
  return out;
}
