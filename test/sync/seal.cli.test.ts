// The seal as an operator meets it (src/sync/settle/seal.ts): `feedsync sync` over a file feed, its
// state in the state file beside the config. A sealed run says so and why, in its report and its
// summary line; `--full` reads regardless; and a state file copied back from before (the seal in it,
// with the fingerprints it vouches for) does not hold over a chatbot changed since: the run reads the
// feed and repairs what the file says.
import { cp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';
import { csv, row, rows, SN, useEmulatorSync, writeHomesConfig } from './helpers/feed.js';

const N = 40;
const sync = useEmulatorSync();

const SEALED = `not read: the feed's file, its config and the chatbot's ${N} listings are as the last run left them`;
const SEALED_SUMMARY = '0 failed; feed not read (sealed: as the last run left it)';

describe('the seal, from the command line', () => {
  it('a sealed run says so; --full reads; a state file of before put back reads and repairs', async () => {
    const te = sync.te();
    const dir = sync.env().dir;
    const homes = join(dir, 'homes.csv');
    await writeFile(homes, csv(rows(N)));
    const config = await writeHomesConfig(sync, { deletes: '{ maxFraction: 0.5 }' });
    const run = async (...more: string[]) => {
      const r = await feedsync(['sync', '--config', config, ...more]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout + r.stderr;
    };
    const priceOf4 = async () => (await te.listings(SN)).find((l) => l.MLSNumber === row(4).MLSNumber)?.SalePrice;

    expect(await run()).toContain(`${N} created`);
    // (a first sync's creates are sealed by the next run, which finds them in step by their stamps)
    expect(await run()).not.toContain('not read');
    const sealed = await run();
    expect(sealed).toContain(SEALED);
    expect(sealed).toContain(SEALED_SUMMARY);
    const full = await run('--full');
    expect(full).not.toContain('not read');
    expect(full).toContain('0 created, 0 updated, 0 deleted, 0 failed');

    // the state as it is now (its seal in it), copied aside
    const state = join(dir, '.feedsync');
    const aside = join(dir, 'state-aside');
    await cp(state, aside, { recursive: true });
    // a price changed in the file: written, and sealed anew
    await writeFile(homes, csv(rows(N).map((r, i) => (i === 3 ? row(4, { SalePrice: 1234 }) : r))));
    expect(await run()).toContain('0 created, 1 updated, 0 deleted');
    expect(await priceOf4()).toBe(1234);
    expect(await run()).toContain(SEALED);
    // the file and the state of before put back: the seal in it vouches for a chatbot that no longer is
    await writeFile(homes, csv(rows(N)));
    await rm(state, { recursive: true });
    await cp(aside, state, { recursive: true });
    const back = await run();
    expect(back).not.toContain('not read');
    expect(back).toContain('0 created, 1 updated, 0 deleted');
    expect(await priceOf4()).toBe(row(4).SalePrice);
    expect(await run()).toContain(SEALED);
    expect(await readdir(state)).toContain('state.lmdb');
  });
});
