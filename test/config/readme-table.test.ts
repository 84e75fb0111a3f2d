// The README's config table and the schema agree: every key the schema accepts has a row, every
// row is a key the schema accepts, and a default the README states is the schema's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Config } from '../../src/config/schema.js';
import { schemaKeys } from '../../src/config/schema-keys.js';

const README = join(import.meta.dirname, '../../README.md');
/** Keys documented as a whole: their own keys are the spec's (ChatbotSettings), not feedsync's. */
const DOCUMENTED_AS_A_WHOLE = new Set(['chatbots[].settings']);

function readmeRows(): Map<string, string> {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('## Configuration reference'));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    const key = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (key && line.startsWith('|')) rows.set(key, (cells[2] ?? '').replace(/`/g, ''));
  }
  return rows;
}

describe('README config table', () => {
  const rows = readmeRows();
  const keys = schemaKeys(Config, DOCUMENTED_AS_A_WHOLE);

  it('has a row for every key the schema accepts', () => {
    const missing = keys.map((k) => k.path).filter((k) => !rows.has(k));
    expect(
      missing,
      `README.md "Configuration reference" has no row for ${missing.join(', ')}: add a row each (| \`key\` | default | meaning |)`,
    ).toEqual([]);
  });

  it('lists no key the schema does not accept', () => {
    const known = new Set(keys.map((k) => k.path));
    const extra = [...rows.keys()].filter((k) => !known.has(k));
    expect(extra, `README.md "Configuration reference" lists ${extra.join(', ')}, which the schema does not accept`).toEqual([]);
  });

  it('states the schema’s defaults', () => {
    const wrong = keys
      .filter((k) => k.default !== undefined && rows.has(k.path))
      .filter((k) => (rows.get(k.path) ?? '').split(' ')[0] !== String(k.default))
      .map((k) => `${k.path}: README says "${rows.get(k.path)}", the schema ${JSON.stringify(k.default)}`);
    expect(wrong, `README.md "Configuration reference" defaults differ from the schema:\n${wrong.join('\n')}`).toEqual([]);
  });
});
