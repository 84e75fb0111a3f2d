// Terminal escapes from a feed never reach a terminal raw: table cells and refusal messages show them
// as \u escapes.
import { describe, expect, it } from 'vitest';
import { formatIssue } from '../../src/errors.js';
import { table } from '../../src/format/table.js';

const RAW = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/;

describe('printable output', () => {
  it('table cells carry no control, C1 or bidi-override characters', () => {
    const lines = table(['key', 'reason'], [['M\u001b[2J1', 'City \u009b31m red \u202Eevil \u0007 bell\nnext']]);
    for (const line of lines) expect(line).not.toMatch(RAW);
    expect(lines[1]).toContain('M\\u001b[2J1');
    expect(lines[1]).toContain('\\u202e');
  });

  it('a refusal names field, rule and an excerpt of the value, printable', () => {
    const text = formatIssue({
      field: 'Description',
      value: `\u001b]0;pwned\u0007${'x'.repeat(1000)}`,
      rule: 'must be at most 20000 characters',
    });
    expect(text).not.toMatch(RAW);
    expect(text.length).toBeLessThan(200);
    expect(text).toMatch(/^Description must be at most 20000 characters \(got ".*… \(1010 chars\)"\)$/);
  });
});
