// The "confirm absences" step of a sync (issue 22), between planning and the delete guard: before a
// listing is deleted because a full pull of a source that can be asked again (a live RESO pull) did
// not have its key, the source is asked for exactly those keys (feeds/reso/reso-confirm.ts). A key the
// source still has is not deleted: its record is mapped and planned like any record read (created or
// updated; an off-market or removed record stays a delete, one a display rule hides goes as that
// rule's removal: goneAs), and the run says that the paging missed
// it. Only keys the source confirms absent (or off the market) stay deletes. A confirmation that
// fails withholds every delete of the run. CSV and XML files are read whole: absence there suffices.
import { causeMessage } from '../../errors.js';
import type { FeedItem, KeyLookup } from '../../feeds/types.js';
import type { KeySource } from '../../mapping/key-sources.js';
import type { PlannedDelete } from '../model/plan-types.js';

export interface AbsenceInput {
  /** the deletes planned; those for keys absent from the pull are confirmed */
  deletes: readonly PlannedDelete[];
  /** how the source can be asked for records; none: absence from the read suffices */
  lookup: KeyLookup | undefined;
  /** the source fields the listing key is read from (mapping/key-sources.ts); none: it cannot be asked */
  sources: KeySource[] | undefined;
  /** the listing key a source record maps to */
  keyOf(data: Record<string, unknown>): string | undefined;
  /** most keys worth asking: past it the delete guard holds every delete anyway (deletes.maxCount, unless forced or in grace) */
  limit: number;
  /** maps and plans (in a real run, writes) records the source still has */
  take(items: FeedItem[]): Promise<void>;
  /** whether the feed side now holds the key as on the market (a listing, or a record kept as rejected) */
  holds(key: string): boolean;
  /** the reason the feed side now gives a key whose record came back and is not held, when it is not an absence (a display rule's removal) */
  goneAs?(key: string): PlannedDelete['reason'] | undefined;
  /** where the key mapping is configured, for the message when it cannot be read backwards */
  keyRule: string;
}

export interface AbsenceResult {
  /** the deletes that may go on to the guard */
  deletes: PlannedDelete[];
  /** the paging missed records the source still has: why the pull is not called whole */
  missed?: string;
  /** the absences could not be confirmed: nothing may be deleted this run */
  problem?: string;
  /** keys asked of the source */
  asked: number;
}

const SHOWN = 5;

export async function confirmAbsences(input: AbsenceInput): Promise<AbsenceResult> {
  const absent = input.deletes.filter((d) => d.reason === 'absent').map((d) => d.key);
  const deletes = [...input.deletes];
  if (!input.lookup || absent.length === 0 || absent.length > input.limit) return { deletes, asked: 0 };
  if (!input.sources) {
    return {
      deletes,
      asked: 0,
      problem: `absences cannot be confirmed with the source: ${input.keyRule} is not a plain source field or a one-field template, so it cannot be asked for by key; nothing is deleted this run`,
    };
  }
  const wanted = new Set(absent);
  const asks = input.sources
    .map((s) => ({
      field: s.field,
      values: absent.map((k) => s.valueOf(k)).filter((v): v is string => v !== undefined),
    }))
    .filter((a) => a.values.length);
  const found = new Map<string, FeedItem>();
  try {
    for await (const items of input.lookup.find(asks)) {
      for (const item of items) {
        // (a record the source has but could not give whole still holds its key: it is kept, not deleted)
        const data = item.data;
        if (data === undefined) continue;
        const key = input.keyOf(data);
        if (key !== undefined && wanted.has(key) && !found.has(key)) found.set(key, item);
      }
    }
  } catch (err) {
    return {
      deletes,
      asked: absent.length,
      problem: `the pull's ${absent.length} absence(s) could not be confirmed with the source (${causeMessage(err)}); nothing is deleted this run`,
    };
  }
  if (found.size === 0) return { deletes, asked: absent.length };
  await input.take([...found.values()]);
  const kept = [...found.keys()].filter((k) => input.holds(k));
  const keptSet = new Set(kept);
  // a record that came back and is not held goes for its own record's reason, where it gives one
  const reasonOf = (d: PlannedDelete): PlannedDelete => {
    const gone = d.reason === 'absent' && found.has(d.key) ? input.goneAs?.(d.key) : undefined;
    return gone === undefined ? d : { ...d, reason: gone };
  };
  return {
    deletes: deletes.filter((d) => !(d.reason === 'absent' && keptSet.has(d.key))).map(reasonOf),
    asked: absent.length,
    ...(kept.length && { missed: missedMessage(kept, input.lookup.paging) }),
  };
}

function missedMessage(keys: readonly string[], paging: KeyLookup['paging']): string {
  const n = keys.length;
  const shown = keys.slice(0, SHOWN).join(', ') + (n > SHOWN ? `, … ${n - SHOWN} more` : '');
  return `the server's paging missed ${n} ${n === 1 ? 'record' : 'records'} that it still has (${shown}): asked for by key, ${n === 1 ? 'it was' : 'they were'} synced, not deleted, and the pull is not called whole; paging in use: ${paging.used}; ${paging.advice}`;
}
