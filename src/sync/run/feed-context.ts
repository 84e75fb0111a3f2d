// What every lane of one feed shares in a run (context.ts FeedContext), built once before the read:
// the compiled mapping and its tallies, the feed's clock and logger, the progress line, the report's frame.
import type { FeedConfig } from '../../config/schema.js';
import { compileMapping } from '../../mapping/index.js';
import { mapItem } from '../../mapping/map-feed.js';
import { countInvalidText, encodingOf, type InvalidText } from '../../mapping/invalid-text.js';
import { formatPosition } from '../../feeds/position.js';
import { createUnmappedTally } from '../../mapping/unmapped.js';
import { laneReport, type LaneReportInput } from '../report/lane-report.js';
import { authFailure } from '../util/auth.js';
import type { FeedContext, Run, SyncDeps, RunOptions } from './context.js';
import { sourceMapping } from '../../feeds/reso/reso-related.js';

/** What every lane of the feed shares: the mapping, the clock, the tallies of the read, the report's frame. */
export function feedContext(
  feed: FeedConfig,
  deps: SyncDeps,
  opts: RunOptions,
  run: Run,
  mostlyInStep: boolean,
): FeedContext {
  const unmapped = createUnmappedTally();
  const replaced = new Map<string, number>();
  /** mapped listings holding U+FFFD (bytes not valid in the feed's encoding) */
  let invalidText: InvalidText | undefined;
  let unmappedSeen = 0;
  let writeTotal: number | undefined;
  let written = 0;
  const display = feed.displayRules;
  const compiled = compileMapping(feed.mapping, {
    // the feed's display rules (docs/display-rules.md), judged against the run's clock
    display,
    ...(opts.now && { now: opts.now }),
    // what the source adds to its records (RESO related resources), judged against the run's clock (record-stamp.ts)
    ...sourceMapping(feed.source),
    onUnmapped: (u) => {
      unmappedSeen++;
      unmapped.add(u);
    },
  });
  const logger = deps.logger.child({ feed: feed.name });
  return {
    feed,
    deps,
    opts,
    run,
    clock: run.clock(feed),
    logger,
    compiled,
    mostlyInStep,
    unmappedSeen: () => unmappedSeen,
    map: (item, chatbot) => {
      const mapped = mapItem(item, compiled, { serialNumber: chatbot, keyBy: feed.keyBy });
      if (mapped.kind !== 'listing') return mapped;
      if (mapped.replaced) for (const f of mapped.replaced) replaced.set(f, (replaced.get(f) ?? 0) + 1);
      invalidText = countInvalidText(invalidText, mapped.listing, () => formatPosition(mapped.position));
      return mapped;
    },
    progress: (phase, done) => deps.onProgress?.({ feed: feed.name, phase, done }),
    wrote: () =>
      deps.onProgress?.({
        feed: feed.name,
        phase: 'write',
        done: ++written,
        ...(writeTotal !== undefined && { total: writeTotal }),
      }),
    addWrites: (n) => {
      writeTotal = (writeTotal ?? 0) + n;
    },
    report: (l, r) => {
      const paged = run.paged.get(l);
      const input: LaneReportInput = {
        ...r,
        remote: { ...r.remote, ...(paged && paged.countedIn !== l.id && { pagingCountedIn: paged.countedIn }) },
        feed: feed.name,
        chatbot: l.chatbot,
        unmapped: unmapped.list(),
        displayRules: display,
        ...(replaced.size && {
          valuesReplaced: [...replaced].map(([field, count]) => ({ field, count })).sort((a, b) => b.count - a.count),
        }),
        ...(invalidText && { invalidText: { ...invalidText, encoding: encodingOf(feed.source) } }),
        calls: { before: run.callsBefore.get(l), after: deps.calls?.snapshot(l.id) },
        stateLocation: deps.store.location,
        startedAt: run.startedAt,
        durationMs: run.ms(),
        ...(opts.attempt && { attempt: opts.attempt }),
      };
      run.reports.set(l, laneReport(input, logger.child({ chatbot: l.chatbot })));
    },
    // (the config's variables are the run's to know: a step records a refusal, the run words it here)
    refusalMessage: (refused) => refused && authFailure(refused, deps.fromEnv),
  };
}
