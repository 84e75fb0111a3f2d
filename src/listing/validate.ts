// Checks a mapped candidate against the spec's create schema and keeps every broken rule, each with
// its field and value, so a rejected row can be fixed in one pass.
import type { z } from 'zod';
import type { ValidationIssue } from '../errors.js';
import { ListingCreate } from './schema.js';

export type ValidationResult = { ok: true; listing: ListingCreate } | { ok: false; issues: ValidationIssue[] };

export function validateListing(candidate: unknown): ValidationResult {
  const r = ListingCreate.safeParse(candidate);
  if (r.success) return { ok: true, listing: r.data };
  return { ok: false, issues: toValidationIssues(r.error, candidate) };
}

export function toValidationIssues(error: z.ZodError, candidate: unknown): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const iss of error.issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) {
        out.push({ field: joinPath([...iss.path, key]), value: valueAt(candidate, [...iss.path, key]), rule: 'is not a field of the spec' });
      }
      continue;
    }
    const value = valueAt(candidate, iss.path);
    out.push({ field: joinPath(iss.path) || '(listing)', value, rule: ruleText(iss, value) });
  }
  return out;
}

function ruleText(iss: z.core.$ZodIssue, value: unknown): string {
  if (iss.code === 'invalid_type') return value === undefined ? 'is required' : `must be a ${iss.expected}`;
  if (iss.code === 'invalid_value') return `must be one of ${iss.values.map(String).join(', ')}`;
  if (iss.code === 'too_small' && typeof iss.minimum !== 'bigint' && iss.origin === 'number') return `must be at least ${iss.minimum}`;
  if (iss.code === 'too_big' && typeof iss.maximum !== 'bigint' && iss.origin === 'number') return `must be at most ${iss.maximum}`;
  return iss.message;
}

function joinPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}
