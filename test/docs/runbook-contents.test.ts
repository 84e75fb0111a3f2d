// docs/runbook.md is read by headings: a table of contents under "## Contents" links every `##` and
// `###` heading, and every link in it lands on one (GitHub's anchors: lower case, punctuation dropped,
// spaces as hyphens, a repeated heading numbered -1, -2, ...).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const text = readFileSync(join(import.meta.dirname, '../../docs/runbook.md'), 'utf8');

const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

function anchors(): string[] {
  const seen = new Map<string, number>();
  const out: string[] = [];
  for (const m of text.matchAll(/^#{2,3} (.+)$/gm)) {
    if (m[1] === 'Contents') continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.push(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

function contents(): string[] {
  const start = text.indexOf('## Contents\n');
  const end = text.indexOf('\n## ', start + 1);
  const block = text.slice(start, end);
  return [...block.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
}

describe('docs/runbook.md', () => {
  it('has a table of contents that links every section and subsection, in order', () => {
    expect(text).toContain('## Contents\n');
    expect(contents()).toEqual(anchors());
  });

  it('starts no paragraph in bold where a heading belongs (a bold lead is a ### heading)', () => {
    const boldLeads = text.split(/\n\s*\n/).filter((p) => /^\*\*[^*]+\.\*\*/.test(p));
    expect(boldLeads.map((p) => p.split('\n')[0])).toEqual([]);
  });
});
