// zod's issues about a config file said for a person: the key's own line, the value found, and the
// fix ("did you mean keyBy?", "must be one of csv, xml, reso", "is required").
import type { z } from 'zod';
import type { ConfigIssue } from '../errors.js';
import { nearest } from '../format/nearest.js';
import { keysAt } from './schema-keys.js';

export type LineOf = (path: ReadonlyArray<PropertyKey>) => number | undefined;

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>(
    (s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)),
    '',
  );
}

export function configIssues(error: z.ZodError, schema: z.ZodType, input: unknown, lineOf: LineOf): ConfigIssue[] {
  return error.issues.flatMap((issue): ConfigIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(schema, issue.path);
      return issue.keys.map((key) => {
        const path = [...issue.path, key];
        const near = nearest(key, known);
        const fix = near ? `did you mean ${near}?` : `known keys here: ${known.join(', ')}`;
        return {
          path: formatPath(path),
          line: lineOf(path),
          message: `${formatPath(path)} is not a known key; ${fix}`,
        };
      });
    }
    const path = formatPath(issue.path);
    // parsed with reportInput, an issue carries the value it saw (after a preprocess such as "money" → { name: "money" });
    // a discriminated union's is the whole object, so its bad `kind` is read from the input
    const value = 'input' in issue && issue.code !== 'invalid_union' ? issue.input : valueAt(input, issue.path);
    return [{ path, line: lineOf(issue.path), message: sentence(issue, path, value) }];
  });
}

const TYPE_NAMES: Record<string, string> = {
  int: 'an integer',
  array: 'a list',
  object: 'a mapping (key: value)',
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
};

function sentence(issue: z.core.$ZodIssue, path: string, value: unknown): string {
  const name = path || 'the config';
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return `${name} is required`;
      return `${name} must be ${TYPE_NAMES[issue.expected] ?? issue.expected} (got ${show(value)})`;
    case 'invalid_value':
      return oneOf(name, value, issue.values.map(String));
    case 'invalid_union': {
      // a discriminated union (source.kind) names the values it knows
      const { options } = issue as { options?: unknown[] };
      if (options?.length) return oneOf(name, value, options.map(String));
      return custom(name, issue.message, value);
    }
    case 'too_big':
    case 'too_small':
      return sizeSentence(issue, name, value);
    case 'invalid_format':
      return formatSentence(issue, name, value);
    default:
      return custom(name, issue.message, value);
  }
}

/** A bound broken: a text's or a list's length, or a number's size. */
function sizeSentence(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall, name: string, value: unknown): string {
  if (!isDefaultMessage(issue.message)) return custom(name, issue.message, value);
  const small = issue.code === 'too_small';
  const bound = Number(small ? issue.minimum : issue.maximum);
  if (issue.origin === 'string')
    return `${name} must have ${small ? 'at least' : 'at most'} ${bound} character(s) (got ${show(value)})`;
  if (issue.origin === 'array') return `${name} must have ${small ? 'at least' : 'at most'} ${bound} item(s)`;
  const op = small ? (issue.inclusive ? 'at least' : 'more than') : issue.inclusive ? 'at most' : 'less than';
  return `${name} must be ${op} ${bound} (got ${show(value)})`;
}

function formatSentence(issue: z.core.$ZodIssueInvalidStringFormat, name: string, value: unknown): string {
  // a pattern the schema explained itself (`redis.sentinel.sentinels`: host:port) says so
  if (issue.format === 'regex' && !isDefaultMessage(issue.message)) return custom(name, issue.message, value);
  if (issue.format === 'url')
    return `${name} must be an absolute URL like https://example.com/feed.xml (got ${show(value)})`;
  return `${name} must be ${issue.format} (got ${show(value)})`;
}

function oneOf(name: string, value: unknown, options: string[]): string {
  const near = typeof value === 'string' ? nearest(value, options, 2) : undefined;
  return `${name} ${show(value)} must be one of ${options.join(', ')}${near ? ` (did you mean ${near}?)` : ''}`;
}

/** A message the schema wrote itself (a rule zod cannot say) follows the path; zod's defaults are rephrased. */
function custom(name: string, message: string, value: unknown): string {
  if (isDefaultMessage(message)) return `${name}: ${message.replace(/^Invalid input: /, '')} (got ${show(value)})`;
  return /^(is|must) /.test(message) ? `${name} ${message}` : `${name}: ${message}`;
}

function isDefaultMessage(message: string): boolean {
  return /^(Invalid|Too small|Too big)/.test(message);
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}
