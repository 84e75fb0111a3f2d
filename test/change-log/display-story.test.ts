// The change log of a feed with display rules (docs/display-rules.md), as a person reads it after
// real CLI runs (no Redis: the state store and the change log beside the config): `history` and
// `runs show` name the rule that removed a listing, and the run's counts keep what each rule did.
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { apiYaml, COLUMNS, csv, row, type Row, SN, useEmulatorSync } from '../sync/helpers/feed.js';

const columns = [...COLUMNS, 'InternetEntireListingDisplayYN', 'ListOfficeName'] as const;
type FlaggedRow = Row & { InternetEntireListingDisplayYN?: string; ListOfficeName?: string };
const flagged = (i: number, patch: FlaggedRow = {}): FlaggedRow => ({
  ...row(i),
  InternetEntireListingDisplayYN: 'Y',
  ListOfficeName: 'Lone Star Homes',
  ...patch,
});

let config: string;
const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  config = join(sync.env().dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      ...apiYaml(sync.te().url, { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }),
      'feeds:',
      '  - name: homes',
      `    chatbot: ${SN}`,
      '    source: { kind: csv, path: homes.csv }',
      '    display: { purpose: idx, statuses: [Active], flags: { StandardStatus: Status } }',
      '    mapping:',
      '      fields:',
      ...COLUMNS.map((c) => `        ${c}: ${c}`),
    ].join('\n'),
  );
});

const runIdOf = (stderr: string) => /runs show (\S+)/.exec(stderr)?.[1];

describe('history and runs show of a removal by a display rule', () => {
  it('name the rule, and the run keeps the counts per rule', async () => {
    const homes = join(sync.env().dir, 'homes.csv');
    await writeFile(
      homes,
      csv(
        [1, 2, 3].map((i) => flagged(i)),
        columns,
      ),
    );
    expect((await feedsync(['sync', '--config', config])).code).toBe(0);
    // the seller of MLS0002 opts out of internet display
    await writeFile(homes, csv([flagged(1), flagged(2, { InternetEntireListingDisplayYN: 'N' }), flagged(3)], columns));
    const second = await feedsync(['sync', '--config', config]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('display rules (idx): not shown: InternetEntireListingDisplayYN false × 1');
    const run = runIdOf(second.stderr)!;

    const history = await feedsync(['history', '--config', config, '--feed', 'homes', '--key', 'MLS0002']);
    expect(history.code).toBe(0);
    expect(history.stdout).toContain('- MLS0002 delete (display rule: InternetEntireListingDisplayYN false)');
    const show = await feedsync(['runs', 'show', run, '--config', config, '--json']);
    const doc = JSON.parse(show.stdout);
    expect(doc.run.counts).toMatchObject({ deleted: 1, 'notShown:InternetEntireListingDisplayYN': 1 });
    expect(
      doc.changes.map((e: { change: { op: string; key: string; reason?: string } }) => [
        e.change.op,
        e.change.key,
        e.change.reason,
      ]),
    ).toEqual([['delete', 'MLS0002', 'rule:InternetEntireListingDisplayYN']]);
    expect((await feedsync(['runs', 'show', run, '--config', config])).stdout).toContain(
      '- MLS0002 delete (display rule: InternetEntireListingDisplayYN false)',
    );
  }, 60_000);
});
