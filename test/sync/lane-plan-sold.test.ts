// A lane's planner asks the sold windows the last run stored for each record whose stamp it checks
// (lane-plan.ts windowEnded). None stored (a feed without display.soldDays): the planner is given
// none to ask, which must answer every key as the stored namespace does, as a view of the state file
// (the run's reads) and as a Map alike; windows stored are asked as before.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileStore, type FileStore } from '../../src/state/file-store.js';
import { withSoldWindows, type LanePlannerInput } from '../../src/sync/plan/lane-plan.js';
import { soldWindowNamespace } from '../../src/sync/model/state-names.js';

let dir: string;
let store: FileStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedsync-sold-'));
  store = await createFileStore(join(dir, 'state.lmdb'));
});
afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** the planner input's other fields, untouched either way */
const rest = { chatbot: 'SN-1', dryRun: false } as unknown as LanePlannerInput;

describe('the sold windows a planner asks', () => {
  it('answer every key as the stored namespace does, whether it holds windows or none', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.string({ maxLength: 6 }),
          fc.constantFrom('2026-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z'),
          { maxKeys: 6 },
        ),
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 10 }),
        async (windows, asked) => {
          const ns = soldWindowNamespace(`feed-${run++}`);
          await store.set(ns, Object.entries(windows));
          for (const stored of [await store.getAll(ns), new Map(Object.entries(windows))]) {
            const input = withSoldWindows({ ...rest, soldUntil: stored });
            expect(input.chatbot).toBe('SN-1');
            expect((input as LanePlannerInput & { dryRun?: boolean }).dryRun).toBe(false);
            // (none stored: nothing to ask per record)
            expect(input.soldUntil === undefined).toBe(Object.keys(windows).length === 0);
            for (const key of [...asked, ...Object.keys(windows)])
              expect(input.soldUntil?.get(key)).toBe(stored.get(key));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leave an input without windows as it is', () => {
    expect(withSoldWindows(rest)).toBe(rest);
  });
});
