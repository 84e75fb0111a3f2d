// The end of a feed run's media mirror: what each listing now uses (a listing whose write failed
// keeps its old objects too, a deleted listing none), which objects no listing uses (marked with
// the time first seen unused), and which of those are past media.graceHours: deleted from the
// bucket (media.deleteBatchSize keys a request), or, in a dry run, named. Returns the state to commit.
import type { StateChange } from '../state/kv-store.js';
import type { MirrorRun } from './mirror-run.js';
import { objectsOf, useValue } from './mirror-state.js';
import { SHOWN_PLANNED } from './report.js';

export interface RunEnd {
  deletedKeys: readonly string[];
  unwrittenKeys: ReadonlySet<string>;
  now: Date;
}

export async function cleanup(run: MirrorRun, end: RunEnd): Promise<StateChange[]> {
  const { opts, report } = run;
  const ns = opts.namespaces;
  const { use, useSet, useDelete } = usesAfter(run, end);
  const { mark, unmark, due } = unusedAfter(run, use, end.now);
  if (opts.dryRun) {
    report.dry = {
      download: run.planned.size,
      delete: due.length,
      downloads: [...run.planned].slice(0, SHOWN_PLANNED),
      deletes: due.slice(0, SHOWN_PLANNED),
    };
    return [];
  }
  const deleted = report.storageError ? [] : await deleteObjects(run, due);
  report.deleted = deleted.length;
  const gone = new Set(deleted);
  const srcDelete = [...run.stored].filter(([, object]) => gone.has(object)).map(([id]) => id);
  return [
    { ns: ns.src, set: run.newSources.filter(([, object]) => !gone.has(object)), delete: srcDelete },
    { ns: ns.use, set: useSet, delete: useDelete },
    { ns: ns.unused, set: mark.filter(([o]) => !gone.has(o)), delete: [...unmark, ...deleted] },
  ].filter((c) => c.set.length > 0 || c.delete.length > 0);
}

/** Each listing's objects after the run, and the changes to `use`. */
function usesAfter(run: MirrorRun, end: RunEnd) {
  const state = run.opts.state;
  const useSet: Array<[string, string]> = [];
  const useDelete: string[] = [];
  const use = new Map(state.use);
  for (const [key, objects] of run.uses) {
    // a listing whose write failed still shows its old photos
    const value = useValue(
      end.unwrittenKeys.has(key) ? [...new Set([...objectsOf(state.use.get(key)), ...objects])] : objects,
    );
    if (value === (state.use.get(key) ?? '')) continue;
    use.set(key, value);
    if (value) useSet.push([key, value]);
    else useDelete.push(key);
  }
  for (const key of end.deletedKeys) {
    if (!use.delete(key) || !state.use.has(key)) continue;
    useDelete.push(key);
  }
  return { use, useSet, useDelete };
}

/** Objects newly unused (marked), used again (unmarked), and unused past the grace period (due). */
function unusedAfter(run: MirrorRun, use: ReadonlyMap<string, string>, now: Date) {
  const { state, media } = run.opts;
  const inUse = new Set<string>();
  for (const value of use.values()) for (const o of objectsOf(value)) inUse.add(o);
  const graceMs = media.graceHours * 3_600_000;
  const mark: Array<[string, string]> = [];
  const unmark: string[] = [];
  const due: string[] = [];
  for (const object of new Set([...run.stored.values(), ...state.unused.keys()])) {
    const since = state.unused.get(object);
    if (inUse.has(object)) {
      if (since !== undefined) unmark.push(object);
      continue;
    }
    if (since === undefined) mark.push([object, now.toISOString()]);
    if (now.getTime() - Date.parse(since ?? now.toISOString()) >= graceMs) due.push(object);
  }
  run.report.waitingGrace = mark.length + [...state.unused.keys()].filter((o) => !inUse.has(o)).length - due.length;
  return { mark, unmark, due };
}

/** In batches of media.deleteBatchSize; the objects the storage deleted. */
async function deleteObjects(run: MirrorRun, keys: readonly string[]): Promise<string[]> {
  const { opts, report } = run;
  const done: string[] = [];
  if (keys.length === 0) return done;
  let store;
  try {
    store = await run.bucket();
  } catch (err) {
    report.storageError = err instanceof Error ? err.message : String(err);
    return done;
  }
  for (let at = 0; at < keys.length; at += opts.media.deleteBatchSize) {
    if (opts.signal?.aborted) break;
    const batch = keys.slice(at, at + opts.media.deleteBatchSize);
    const errors = await store.deleteBatch(batch);
    const failed = new Set(errors.map((e) => e.key));
    done.push(...batch.filter((k) => !failed.has(k)));
    if (errors.length)
      opts.logger.warn(
        { feed: opts.feed, failed: errors.length, first: errors[0] },
        'unused photo objects could not all be deleted; retried next run',
      );
  }
  return done;
}
