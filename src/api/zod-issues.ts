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
    out.push({ field: path.join('.') || '(body)', value, rule: ruleOf(issue, value) });
  }
  return out;
}

const TYPE_NAMES: Record<string, string> = {
  int: 'an integer',
  array: 'an array',
  object: 'an object',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
};

/** zod's default messages ("Invalid input: expected int, received number") said as a rule; custom messages kept. */
function ruleOf(issue: z.core.$ZodIssue, value: unknown): string {
  const custom = !/^(Invalid|Too small|Too big)/.test(issue.message);
  if (custom) return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      return value === undefined ? 'is required' : `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = small ? issue.minimum : issue.maximum;
      const op = small ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
      if (issue.origin === 'array') return `must have ${small ? 'at least' : 'at most'} ${bound} item(s)`;
      if (issue.origin === 'string') return `must have ${small ? 'at least' : 'at most'} ${bound} character(s)`;
      return `must be ${op} ${bound}`;
    }
    default:
      return issue.message;
  }
}

function valueAt(input: unknown, path: string[]): unknown {
  let cur = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
