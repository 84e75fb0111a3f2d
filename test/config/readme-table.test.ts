// The configuration reference (docs/configuration.md) and the schema agree: every key the schema
// accepts has one row, every row is a key the schema accepts, and a default the table states is the
// schema's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Config } from '../../src/config/schema.js';
import { schemaKeys } from '../../src/config/schema-keys.js';

const REFERENCE = join(import.meta.dirname, '../../docs/configuration.md');
const WHERE = 'docs/configuration.md "Configuration reference"';
/** Keys documented as a whole: their own keys are the spec's (ChatbotSettings), not feedsync's. */
const DOCUMENTED_AS_A_WHOLE = new Set(['chatbots[].settings']);

/** The rows of the section's first table, in order, as [key, default]. */
function referenceRows(): [string, string][] {
  const text = readFileSync(REFERENCE, 'utf8');
  const lines = text.slice(text.indexOf('## Configuration reference')).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'));
  const rows: [string, string][] = [];
  for (const line of lines.slice(start, end)) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    const key = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (key) rows.push([key, (cells[2] ?? '').replace(/`/g, '')]);
  }
  return rows;
}

describe('the configuration reference table', () => {
  const list = referenceRows();
  const rows = new Map(list);
  const keys = schemaKeys(Config, DOCUMENTED_AS_A_WHOLE);

  it('has one row per key', () => {
    const twice = list.map(([k]) => k).filter((k, i, all) => all.indexOf(k) !== i);
    expect(twice, `${WHERE} has more than one row for ${twice.join(', ')}`).toEqual([]);
  });

  it('has a row for every key the schema accepts', () => {
    const missing = keys.map((k) => k.path).filter((k) => !rows.has(k));
    expect(
      missing,
      `${WHERE} has no row for ${missing.join(', ')}: add a row each (| \`key\` | default | meaning |)`,
    ).toEqual([]);
  });

  it('lists no key the schema does not accept', () => {
    const known = new Set(keys.map((k) => k.path));
    const extra = [...rows.keys()].filter((k) => !known.has(k));
    expect(extra, `${WHERE} lists ${extra.join(', ')}, which the schema does not accept`).toEqual([]);
  });

  it('states the schema’s defaults', () => {
    const wrong = keys
      .filter((k) => k.default !== undefined && rows.has(k.path))
      .filter((k) => (rows.get(k.path) ?? '').split(' ')[0] !== String(k.default))
      .map((k) => `${k.path}: the table says "${rows.get(k.path)}", the schema ${JSON.stringify(k.default)}`);
    expect(wrong, `${WHERE}: defaults differ from the schema:\n${wrong.join('\n')}`).toEqual([]);
  });
});
