// zod's issues as the ValidationIssue of src/errors.ts: the field by its path, the value found there
// and the rule broken. Used by the client (to refuse a bad request before sending it) and by the
// emulator (to answer 400 with a Message naming field and rule).
import type { z } from 'zod';
import type { ValidationIssue } from '../errors.js';

export function zodIssues(error: z.ZodError, input: unknown): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const field = [...path, key].join('.');
        out.push({ field, value: valueAt(input, [...path, key]), rule: 'is not a field of this request' });
      }
      continue;
    }
    const value = valueAt(input, path);
    const rule = issue.code === 'invalid_type' && value === undefined ? 'is required' : issue.message;
    out.push({ field: path.join('.') || '(body)', value, rule });
  }
  return out;
}

function valueAt(input: unknown, path: string[]): unknown {
  let cur = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
