// Every YAML example in README.md and docs/*.md parses; the vendor examples of docs/vendors.md are
// valid sources as written; and a `${VAR}` left unquoted inside a flow map gets the hint that fixes it.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { FeedSource } from '../../src/feeds/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = [
  'README.md',
  ...readdirSync(`${root}docs`)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function yamlBlocks(file: string): Array<{ line: number; text: string }> {
  const lines = readFileSync(`${root}${file}`, 'utf8').split('\n');
  const blocks: Array<{ line: number; text: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```ya?ml\s*$/.test(lines[i]!)) continue;
    const start = i + 1;
    let j = start;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j]!)) j++;
    blocks.push({ line: start + 1, text: lines.slice(start, j).join('\n') });
    i = j;
  }
  return blocks;
}

describe('YAML examples in the docs', () => {
  const all = files.flatMap((file) => yamlBlocks(file).map((b) => ({ ...b, file })));

  it('there are examples to check', () => {
    expect(all.length).toBeGreaterThanOrEqual(8);
    expect(files).toContain('docs/vendors.md');
  });

  it.each(all.map((b) => [`${b.file}:${b.line}`, b] as const))('%s parses', (_name, b) => {
    // a block may hold several examples, one YAML document each (---)
    expect(parseAllDocuments(b.text).flatMap((d) => ('errors' in d ? d.errors.map((e) => e.message) : []))).toEqual([]);
  });

  it('each vendor example of docs/vendors.md is a valid source as written', () => {
    const sources = yamlBlocks('docs/vendors.md')
      .map((b) => parseDocument(b.text).toJS() as { source?: Record<string, unknown> })
      .filter((d) => d?.source?.vendor);
    expect(sources.map((d) => d.source!.vendor)).toEqual(['mlsgrid', 'trestle', 'bridge', 'spark']);
    for (const d of sources) {
      const r = FeedSource.safeParse(d.source);
      expect(r.success, JSON.stringify(r.error?.issues)).toBe(true);
    }
  });
});

describe('the YAML error hint', () => {
  it('says to quote an unquoted ${VAR} inside a flow map, not to fix the indentation', () => {
    const text = [
      'api: { baseUrl: embedded, secretKey: k-123456, sessionKey: s-123456 }',
      'feeds:',
      '  - name: mls',
      '    chatbot: SN-1',
      '    source: { kind: reso, url: https://reso.test/odata, auth: { kind: oauth2, tokenUrl: https://reso.test/token,',
      '              clientId: ${MLS_CLIENT_ID}, clientSecret: ${MLS_CLIENT_SECRET} } }',
      '',
    ].join('\n');
    let error: unknown;
    try {
      parseConfig(text, 'feedsync.yaml', { MLS_CLIENT_ID: 'a', MLS_CLIENT_SECRET: 'b' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).issues![0]!.message;
    expect(message).toContain('quote the value, e.g. clientId: "${MLS_CLIENT_ID}"');
    expect(message).not.toContain('indentation');
    // quoted, it parses and the variables are read
    const fixed = text
      .replace('${MLS_CLIENT_ID}', '"${MLS_CLIENT_ID}"')
      .replace('${MLS_CLIENT_SECRET}', '"${MLS_CLIENT_SECRET}"');
    expect(() =>
      parseConfig(fixed, 'feedsync.yaml', { MLS_CLIENT_ID: 'client-a', MLS_CLIENT_SECRET: 'secret-b' }),
    ).not.toThrow();
  });
});
