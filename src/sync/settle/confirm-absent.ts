// The "confirm absences" step of a sync (issue 22), between planning and the delete guard: before a
// listing is deleted because a full pull of a source that can be asked again (a live RESO pull) did
// not have its key, the source is asked for exactly those keys (feeds/reso/reso-confirm.ts). A key the
// source still has is not deleted: its record is mapped and planned like any record read (created or
// updated; an off-market or removed record stays a delete, one a display rule hides goes as that
// rule's removal: goneAs), and the run says that the paging missed
// it. Only keys the source confirms absent (or off the market) stay deletes. A confirmation that
// fails withholds every delete of the run. CSV and XML files are read whole: absence there suffices.
//
// An incremental or event run (`removals`) reads only the records that changed, so one record of a
// key the source holds several times (two RESO records sharing the ListingId the reso preset keys by)
// cannot decide alone (issue 54 point 4): before a delete its record asks for (off the market,
// removed, hidden by a rule), the key's records are asked for by the listing key's source fields, and
// the full pull's rule decides: the key's last record in the reader's key order (position.id, the
// pull's $orderby) is planned, so the listing shows what a full pull would show. A key the source
// holds once is left to the record read (nothing is taken again).
//
// A record the source answers has its listing key read once, here (mapping/item-key.ts itemKey, as the
// read step reads a record's), and carries it to the lane that plans it (take: read-feed.ts again).
import { causeMessage } from '../../errors.js';
import type { FeedItem, KeyLookup } from '../../feeds/types.js';
import { keyed } from '../../mapping/item-key.js';
import type { KeySource } from '../../mapping/key-sources.js';
import type { KeyedItem } from '../../mapping/types.js';
import type { PlannedDelete } from '../model/plan-types.js';

export interface AbsenceInput {
  /** the deletes planned; those for keys absent from the pull are confirmed */
  deletes: readonly PlannedDelete[];
  /** how the source can be asked for records; none: absence from the read suffices */
  lookup: KeyLookup | undefined;
  /** the source fields the listing key is read from (mapping/key-sources.ts); none: it cannot be asked */
  sources: KeySource[] | undefined;
  /** the listing key of a record the source answered (mapping/item-key.ts itemKey): read once, carried by the item from here on */
  keyOf(item: FeedItem): string | undefined;
  /** most keys worth asking: past it the delete guard holds every delete anyway (deletes.maxCount, unless forced or in grace) */
  limit: number;
  /** maps and plans (in a real run, writes) records the source still has, each carrying its key */
  take(items: KeyedItem[]): Promise<void>;
  /** whether the feed side now holds the key as on the market (a listing, or a record kept as rejected) */
  holds(key: string): boolean;
  /** the reason the feed side now gives a key whose record came back and is not held, when it is not an absence (a display rule's removal) */
  goneAs?(key: string): PlannedDelete['reason'] | undefined;
  /** where the key mapping is configured, for the message when it cannot be read backwards */
  keyRule: string;
  /** an incremental or event read: the keys of deletes its records ask for are asked too, for the key's other records */
  removals?: boolean;
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
  // a removal's other records are asked by the fields other than the record's own id (ListingKey): a
  // record holding the key there is the record read, and a vendor that lets no filter name it (MLS
  // Grid) would make it a keys-only read of the feed; a key read from the id alone asks nothing
  const others = input.sources?.filter((s) => s.field !== input.lookup?.idField);
  const removals = input.removals === true && others !== undefined && others.length > 0;
  const askedFor = (d: PlannedDelete) => d.reason === 'absent' || (removals && byRecord(d.reason));
  const asked = input.deletes.filter(askedFor).map((d) => d.key);
  const absent = new Set(input.deletes.filter((d) => d.reason === 'absent').map((d) => d.key));
  const deletes = [...input.deletes];
  if (!input.lookup || asked.length === 0 || asked.length > input.limit) return { deletes, asked: 0 };
  if (!input.sources) {
    return {
      deletes,
      asked: 0,
      problem: `absences cannot be confirmed with the source: ${input.keyRule} is not a plain source field or a one-field template, so it cannot be asked for by key; nothing is deleted this run`,
    };
  }
  const found = await findLast(input, asked, absent.size === 0 && others ? others : input.sources);
  if (typeof found === 'string')
    return {
      deletes,
      asked: asked.length,
      problem: removals
        ? `the ${asked.length} key(s) to delete could not be asked of the source for their other records (${found}); nothing is deleted this run`
        : `the pull's ${asked.length} absence(s) could not be confirmed with the source (${found}); nothing is deleted this run`,
    };
  // an absent key's record is taken; a removal's only where the source holds the key more than once
  const taken = new Map([...found].filter(([key, f]) => f.records > 1 || !removals || absent.has(key)));
  if (taken.size === 0) return { deletes, asked: asked.length };
  await input.take([...taken.values()].map((f) => f.last));
  const keptSet = new Set([...taken.keys()].filter((k) => input.holds(k)));
  const kept = [...keptSet].filter((k) => absent.has(k));
  // a record that came back and is not held goes for its own record's reason, where it gives one
  const reasonOf = (d: PlannedDelete): PlannedDelete => {
    const gone = d.reason === 'absent' && taken.has(d.key) ? input.goneAs?.(d.key) : undefined;
    return gone === undefined ? d : { ...d, reason: gone };
  };
  return {
    deletes: deletes.filter((d) => !(askedFor(d) && keptSet.has(d.key))).map(reasonOf),
    asked: asked.length,
    ...(kept.length && { missed: missedMessage(kept, input.lookup.paging) }),
  };
}

/** the reasons a record read gives for a delete (off the market, removed, a display rule's), which another record of its key may overrule */
const byRecord = (reason: PlannedDelete['reason']): boolean =>
  reason === 'off-market' || reason === 'removed' || reason.startsWith('rule:');

/**
 * Each asked key's records as the source holds them now: how many, and the last in the reader's key
 * order (position.id; without one, the last answered), the one a full pull lets decide. A lookup that
 * failed: why, as a string.
 */
async function findLast(
  input: AbsenceInput,
  keys: readonly string[],
  sources: readonly KeySource[],
): Promise<Map<string, { last: KeyedItem; records: number }> | string> {
  const wanted = new Set(keys);
  const asks = sources
    .map((s) => ({ field: s.field, values: keys.map((k) => s.valueOf(k)).filter((v): v is string => v !== undefined) }))
    .filter((a) => a.values.length);
  const found = new Map<string, { last: KeyedItem; records: number; ids: Set<string> }>();
  try {
    for await (const items of input.lookup!.find(asks)) {
      for (const item of items) {
        // (a record the source has but could not give whole still holds its key: it is kept, not deleted)
        if (item.data === undefined) continue;
        const key = input.keyOf(item);
        if (key === undefined || !wanted.has(key)) continue;
        const taken = keyed(item, key);
        const id = item.position.id;
        const had = found.get(key);
        // one record answered twice (asked by two of its fields) counts once
        if (had && id !== undefined && had.ids.has(id)) continue;
        if (!had) found.set(key, { last: taken, records: 1, ids: new Set(id === undefined ? [] : [id]) });
        else {
          had.records++;
          if (id !== undefined) had.ids.add(id);
          const lastId = had.last.position.id;
          if (id === undefined || lastId === undefined || id > lastId) had.last = taken;
        }
      }
    }
  } catch (err) {
    return causeMessage(err);
  }
  return found;
}

function missedMessage(keys: readonly string[], paging: KeyLookup['paging']): string {
  const n = keys.length;
  const shown = keys.slice(0, SHOWN).join(', ') + (n > SHOWN ? `, … ${n - SHOWN} more` : '');
  return `the server's paging missed ${n} ${n === 1 ? 'record' : 'records'} that it still has (${shown}): asked for by key, ${n === 1 ? 'it was' : 'they were'} synced, not deleted, and the pull is not called whole; paging in use: ${paging.used}; ${paging.advice}`;
}
