// The open houses of a feed's listings as a run sees them (reso-open-houses.ts): what the last
// successful run stored (per listing, by its key: its ListingId and the open houses shown then), less
// those that have ended by this run's clock, plus what this run learned (OpenHouse records pulled,
// expanded lists read). Each lane of the feed keeps its own copy (a lane whose run failed keeps the
// old one): the run starts from the first lane's, and a listing is "changed" when what the run ends
// with differs from any lane's copy. Plain data: the reader asks the sync for the copies and hands
// back each lane's copy made `final()` (the source's state: types.ts SourceState).
import { z } from 'zod';
import { shownOpenHouse } from '../../mapping/open-houses.js';

/** One listing's entry in the state store: its ListingId (to be asked for by it) and its shown open houses, the soonest first. */
const Kept = z.object({
  id: z.string().optional(),
  oh: z.array(z.object({ k: z.string(), s: z.string(), e: z.string() })),
});
type Kept = z.infer<typeof Kept>;
type Entry = Kept['oh'][number];

export interface OpenHouseBook {
  /** OpenHouse records from the resource (`full`: every one, so any other kept is gone); `joinField` names the listing's key in them */
  apply(records: ReadonlyArray<Record<string, unknown>>, full: boolean, joinField?: string): void;
  /** the listing's kept open houses as OpenHouse records (related: joined to its record) */
  shown(key: string, listingId: string | undefined): Array<Record<string, string>>;
  /** the listing's expanded list: the open houses of it shown now, learned */
  learn(key: string, list: unknown, listingId: string | undefined): unknown[];
  /** a listing no longer shown: its open houses go */
  forget(key: string): void;
  /** listings whose shown open houses differ from what was stored (changed, cancelled, ended) */
  changed(): string[];
  listingId(key: string): string | undefined;
  /** the listings whose kept entry (the first lane's copy) does not parse: their open houses are not known until pulled whole */
  unreadable(): string[];
  /** what to store: listing key → its entry, for the listings with open houses shown (each lane's copy becomes this) */
  final(): Map<string, string>;
}

export function openHouseBook(copies: ReadonlyArray<ReadonlyMap<string, string>>, now: Date): OpenHouseBook {
  const lists = new Map<string, Kept>();
  /** per lane: key → its copy's open houses as JSON (compared with what the run ends with) */
  const before = copies.map(
    (copy) => new Map([...copy].map(([key, text]) => [key, JSON.stringify(parseKept(text)?.oh ?? text)])),
  );
  const storedAnywhere = (key: string) => before.some((b) => b.has(key));
  /** OpenHouseKey → the listing it is kept under */
  const where = keepLive(copies[0], now, lists);
  const unreadable = [...(copies[0]?.keys() ?? [])].filter((key) => !lists.has(key));
  const entryOf = (o: unknown, k: string): Entry | undefined => {
    const t = shownOpenHouse(o, now);
    return t && { k, s: t.start.toISOString(), e: t.end.toISOString() };
  };
  const put = (key: string, oh: Entry[], id: string | undefined) => {
    const kept = lists.get(key);
    // (a listing with none, and none stored, is not held: the book holds listings with open houses only)
    if (!oh.length && !storedAnywhere(key)) return void lists.delete(key);
    lists.set(key, {
      ...((id ?? kept?.id) !== undefined && { id: id ?? kept?.id }),
      oh: oh.sort((a, b) => a.s.localeCompare(b.s)),
    });
  };
  return {
    apply(records, full, joinField = 'ListingKey') {
      if (full) {
        for (const [key, kept] of lists) lists.set(key, { ...kept, oh: [] });
        where.clear();
      }
      for (const r of records) {
        const k = textOf(r.OpenHouseKey);
        const key = textOf(r[joinField]);
        if (k === undefined || key === undefined) continue;
        const was = where.get(k);
        if (was !== undefined)
          put(
            was,
            lists.get(was)!.oh.filter((e) => e.k !== k),
            undefined,
          );
        where.delete(k);
        const entry = entryOf(r, k);
        const others = lists.get(key)?.oh ?? [];
        put(key, entry ? [...others, entry] : others, textOf(r.ListingId));
        if (entry) where.set(k, key);
      }
    },
    shown(key, listingId) {
      const kept = lists.get(key);
      if (!kept) return [];
      if (listingId !== undefined && kept.id !== listingId) lists.set(key, { ...kept, id: listingId });
      return kept.oh.map((e) => ({ OpenHouseKey: e.k, OpenHouseStartTime: e.s, OpenHouseEndTime: e.e }));
    },
    learn(key, list, listingId) {
      const raw = Array.isArray(list) ? list.filter((o) => shownOpenHouse(o, now)) : [];
      put(
        key,
        raw.map((o, i) => entryOf(o, textOf((o as Record<string, unknown>).OpenHouseKey) ?? String(i))!),
        listingId,
      );
      return raw;
    },
    forget(key) {
      const kept = lists.get(key);
      if (kept) put(key, [], undefined);
    },
    changed() {
      const keys = new Set([...lists.keys(), ...before.flatMap((b) => [...b.keys()])]);
      const now = (k: string) => JSON.stringify(lists.get(k)?.oh ?? []);
      return [...keys].filter((k) =>
        (before.length ? before : [new Map<string, string>()]).some((b) => (b.get(k) ?? '[]') !== now(k)),
      );
    },
    listingId: (key) => lists.get(key)?.id,
    unreadable: () => unreadable,
    final: () =>
      new Map([...lists].filter(([, kept]) => kept.oh.length > 0).map(([key, kept]) => [key, JSON.stringify(kept)])),
  };
}

/** The first lane's copy into `lists`, less the open houses `now` has ended; where each open house is kept (OpenHouseKey → listing key). */
function keepLive(
  copy: ReadonlyMap<string, string> | undefined,
  now: Date,
  lists: Map<string, Kept>,
): Map<string, string> {
  const where = new Map<string, string>();
  for (const [key, text] of copy ?? []) {
    const kept = parseKept(text);
    if (!kept) continue;
    const live = kept.oh.filter((e) => Date.parse(e.e) > now.getTime());
    lists.set(key, { ...kept, oh: live });
    for (const e of live) where.set(e.k, key);
  }
  return where;
}

function parseKept(text: string): Kept | undefined {
  try {
    const r = Kept.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined; // (not JSON: as none kept; the open houses are pulled again)
  }
}

function textOf(v: unknown): string | undefined {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) ? String(v) : undefined;
}
