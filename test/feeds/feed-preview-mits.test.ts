// `feedsync feed preview` on a MITS feed, as a user runs it: each record says how it was joined
// (its property, floorplan and unit, and what decided its availability); and the complete
// example of docs/configuration.md "Rentals" is a config that loads.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedsync-mits-preview-'));
  await writeFile(
    join(dir, 'feedsync.yaml'),
    [
      'api: { baseUrl: embedded, secretKey: k, sessionKey: s }',
      'feeds:',
      '  - name: rentals',
      '    chatbot: SN-R',
      `    source: { kind: mits, path: ${JSON.stringify(join(root, 'fixtures/feeds/mits-sample.xml'))} }`,
      '    mapping: { preset: mits }',
    ].join('\n'),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function preview(args: string[]) {
  const r = spawnSync(
    process.execPath,
    [
      join(root, 'bin/feedsync.js'),
      'feed',
      'preview',
      '--config',
      join(dir, 'feedsync.yaml'),
      '--feed',
      'rentals',
      ...args,
    ],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'warn' },
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('feed preview of a MITS feed', () => {
  it('--json: every listing, skipped and rejected record with its join', () => {
    const r = preview(['--json']);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.counts).toEqual({ records: 6, valid: 4, rejected: 1, skipped: 1, removed: 0, parseErrors: 0 });
    expect(doc.listings.map((l: { key: string; join: string }) => [l.key, l.join])).toEqual([
      [
        'HV100-101',
        'property HV100 "Harbor View Apartments", unit 101; floorplan A1 by Unit/FloorplanID; available (UnitLeasedStatus available)',
      ],
      [
        'HV100-102',
        'property HV100 "Harbor View Apartments", unit 102; floorplan B2 by Unit/FloorplanID; on_notice (UnitLeasedStatus on_notice)',
      ],
      [
        'HV100-104',
        'property HV100 "Harbor View Apartments", unit 104; floorplan "B2 Two Bedroom" by Unit/FloorplanName; available (UnitLeasedStatus not_ready)',
      ],
      [
        'ELM7-ELM7-1',
        'property ELM7 "Elm Street Townhome", unit ELM7-1; the property\'s only floorplan (ELM7-FP; the unit names none); available (VacancyClass Unoccupied)',
      ],
    ]);
    expect(doc.skipped).toEqual([
      {
        position: expect.stringContaining('(PropertyID HV100, UnitID 103)'),
        key: 'HV100-103',
        join: 'property HV100 "Harbor View Apartments", unit 103; floorplan A1 by Unit/FloorplanID; leased (UnitLeasedStatus leased)',
        reason: 'Availability is "leased": off the market',
      },
    ]);
    expect(doc.rejected).toMatchObject([
      {
        key: 'RV9-L-201',
        join: expect.stringContaining('floorplan L1 by Unit/FloorplanID'),
        issues: ['YearBuilt is missing'],
      },
    ]);
  }, 60_000);

  it('text: the join under each record', () => {
    const r = preview(['--limit', '1']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'HV100-101\n    join: property HV100 "Harbor View Apartments", unit 101; floorplan A1 by Unit/FloorplanID; available (UnitLeasedStatus available)\n',
    );
    expect(r.stdout).toContain('HV100-103: Availability is "leased": off the market\n    join: property HV100');
  }, 60_000);
});

describe('the Rentals example of docs/configuration.md', () => {
  it('is a complete config: a mits feed with the mits preset', async () => {
    const doc = await readFile(join(root, 'docs/configuration.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Rentals'));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const config = parseConfig(yaml, 'configuration.md', {
      CHATBOT_SECRET_KEY: 'k',
      CHATBOT_SESSION_KEY: 's',
      PM_FEED_KEY: 'x',
    });
    expect(config.feeds[0]).toMatchObject({ source: { kind: 'mits', recordPer: 'unit' }, mapping: { preset: 'mits' } });
  });
});
