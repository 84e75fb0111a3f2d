// An undo its signal stopped ends in the word a sync stopped by the same signal ends in (the one
// rule, sync/model/outcome.ts stoppedOutcome): `handed-back` when its worker shut down, `taken-over`
// when its job lock was lost, `cancelled` by an operator, else `aborted`. Stopped before it pages the
// chatbot (the signal aborted already), each writes nothing.
import { describe, expect, it } from 'vitest';
import { CancelRequest, JOB_LOCK_LOST, WORKER_SHUTDOWN } from '../../src/errors.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { SN } from '../sync/helpers/feed.js';
import { createStory, goodRows, inProcess, useUndoEmulator } from './helpers.js';

let te: TestEmulator;
const { dirs } = useUndoEmulator((t) => (te = t));

const REASONS: Array<[string, unknown, string]> = [
  ["its worker's shutdown", WORKER_SHUTDOWN, 'handed-back'],
  ['a lost job lock', JOB_LOCK_LOST, 'taken-over'],
  ["an operator's cancel", new CancelRequest('ops@node-a'), 'cancelled'],
  ['anything else (Ctrl-C, a deadline)', new Error('interrupted'), 'aborted'],
];

describe('an undo stopped by its signal', () => {
  it.each(REASONS)('by %s ends as a sync stopped by it does', async (_what, reason, word) => {
    const s = await createStory(te.url);
    dirs.push(s.dir);
    await s.writeFeed(goodRows(20));
    await inProcess(s.config, async (ops) => {
      const first = await ops.sync();
      expect(first.outcome).toBe('ok');
      await s.writeFeed(goodRows(22));
      const second = await ops.sync();
      const listings = await te.listings(SN);

      const sync = await ops.sync({}, AbortSignal.abort(reason));
      const undo = await ops.undo(second.runId, {}, AbortSignal.abort(reason));
      expect([sync.outcome, undo.outcome]).toEqual([word, word]);
      expect(await te.listings(SN)).toEqual(listings);
    });
  });
});
