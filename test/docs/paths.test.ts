// The docs name files that exist: every `src/...` path in docs/*.md, and in docs/design.md (the map of
// the code) every module it names in backticks by its path (`sync/run/feed-run.ts`), relative to src/
// or to the repository's root.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));

/** `src/x/y.ts`, `src/x/`, `src/x/y.ts:12` (a line), `src/x/*.ts` (a glob: its folder) as the path to look for. */
const pathOf = (p: string) =>
  p
    .replace(/[.,;:)]+$/, '')
    .replace(/:\d+$/, '')
    .replace(/\/[^/]*\*.*$/, '');
const exists = (p: string) => existsSync(join(root, p)) || existsSync(join(root, 'src', p));

describe('the paths the docs name', () => {
  it.each(docs)('docs/%s: every src/ path exists', (doc) => {
    const text = readFileSync(join(root, 'docs', doc), 'utf8');
    const missing = [...text.matchAll(/(?<![\w./-])src\/[\w./*-]+/g)]
      .map((m) => pathOf(m[0]))
      .filter((p) => !exists(p));
    expect(missing).toEqual([]);
  });

  it('docs/design.md: every module path in backticks exists, under src/ or the root', () => {
    const text = readFileSync(join(root, 'docs/design.md'), 'utf8');
    const named = [...text.matchAll(/`([\w.-]+(?:\/[\w.-]+)+\.(?:ts|js))\b/g)].map((m) => pathOf(m[1]!));
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((p) => !exists(p))).toEqual([]);
  });
});
