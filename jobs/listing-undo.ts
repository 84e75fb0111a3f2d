// Undo one run (`feedsync enqueue undo RUN`): put its chatbot back as it was before, listing for
// listing (src/undo/). It takes the chatbot's sync lock, so it never runs beside a sync of the
// chatbot. The report is the job's return value; a guard (the change log did not keep all of the
// run) or a usage error fails without retry, a transient failure is retried.
import { z } from 'zod';
import type { JobDefinition } from '../src/queue/index.js';
import { undoRun, type UndoReport } from '../src/undo/index.js';

export const ListingUndoPayload = z.strictObject({
  /** the run to undo */
  run: z.string().min(1),
  /** its feed and chatbot, as the change log named them when the job was queued (history, lock) */
  feed: z.string().min(1),
  chatbot: z.string().min(1),
  dryRun: z.boolean().optional(),
  force: z.boolean().optional(),
});
export type ListingUndoPayload = z.infer<typeof ListingUndoPayload>;

export const listingUndo: JobDefinition<ListingUndoPayload, UndoReport> = {
  name: 'listing-undo',
  kind: 'undo',
  lockKind: 'sync',
  payload: ListingUndoPayload,
  exclusive: true,
  logsSummary: true,
  target: (p) => ({ feed: p.feed, chatbot: p.chatbot }),
  process: (p, ctx) => {
    if (!ctx.runtime.changeLog) throw new Error('this worker has no change log: undo reads the run from it');
    return undoRun(
      p.run,
      {
        api: ctx.runtime.api,
        store: ctx.runtime.store,
        changeLog: ctx.runtime.changeLog,
        config: ctx.config,
        logger: ctx.logger,
        signal: ctx.signal,
        calls: ctx.calls,
      },
      { dryRun: p.dryRun, force: p.force, job: { jobId: ctx.jobId, attempt: ctx.attempt.made } },
    );
  },
};
