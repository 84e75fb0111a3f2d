// `feedsync undo` pages the chatbot as a sync does, keeping each listing's compared JSON for the
// change log: past 8 MB (remote.ts COMPARED_MEMORY_BYTES) it goes to a temporary file, and when that
// file cannot be made (a full disk, a TMPDIR that is gone) the paging says so once — where, why, the
// memory it holds. Undo paged without the run's logger, so the warning was lost: here a chatbot of
// 2,200 listings with 4.5 KB descriptions (about 10 MB) is undone with TMPDIR where no folder can be.
import '../setup/needs-redis.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { row } from '../sync/helpers/feed.js';
import { createStory, runIdOf, useUndoEmulator } from './helpers.js';

let te: TestEmulator;
const { dirs } = useUndoEmulator((t) => (te = t));

const N = 2200;
const homes = (priced: (i: number) => number) =>
  Array.from({ length: N }, (_, k) => ({
    ...row(k + 1, { SalePrice: priced(k + 1) }),
    Description: `Home ${k + 1}: ${'bright rooms, a quiet street and a garden. '.repeat(105)}`.trim(),
  }));

describe('feedsync undo: the paging warnings', () => {
  it(
    'says when the compared listings stay in memory because their temporary file cannot be made',
    { timeout: 300_000 },
    async () => {
      const s = await createStory(te.url);
      dirs.push(s.dir);
      await s.writeFeed(homes((i) => 100_000 + i));
      const good = await feedsync(['sync', '--config', s.config]);
      expect(good.code, good.stderr).toBe(0);
      await s.writeFeed(homes((i) => (i <= 5 ? 1_000_000 + i : 100_000 + i)));
      const bad = await feedsync(['sync', '--config', s.config]);
      expect(bad.code, bad.stderr).toBe(0);
      const runId = runIdOf(bad.stderr)!;

      // (a folder under a file: nothing can make it, as a full disk makes nothing)
      const gone = join(s.config, 'tmp');
      const undo = await feedsync(['undo', runId, '--config', s.config], { TMPDIR: gone });
      expect(undo.code, undo.stderr).toBe(0);
      expect(undo.stderr).toContain(
        `chatbot SN-SYNC's listings (for the change log) stays in memory: its temporary file in ${gone} could not be made (ENOTDIR`,
      );
      // once for the paging, however many pages went to memory
      expect(undo.stderr.split('stays in memory').length - 1).toBe(1);
      // a JSON line with one `chatbot` (the undo's logger names it; a second key of the same name
      // is a line log shippers read as they like: the first, the last, or an error)
      const line = undo.stderr.split('\n').find((l) => l.includes('stays in memory'))!;
      expect(line.match(/"chatbot":/g)).toEqual(['"chatbot":']);
      expect(JSON.parse(line)).toMatchObject({ chatbot: 'SN-SYNC', feed: expect.any(String), dir: gone });
    },
  );
});
