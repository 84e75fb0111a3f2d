// One chatbot's stored listings, indexed so a sync over 100k listings does not scan them all on every
// list page or keyed update/delete: by ID (in insertion order, which is ID order because IDs only
// grow), by position in ID order (so an unfiltered page is a slice), and by MLSNumber and Url (the
// service may hold duplicates of a key, so each maps to a set of IDs).
import type { ListingCreate } from '../api/schemas.js';

/** A listing as the emulated service holds it: what was created, and its ID. */
export type StoredListing = ListingCreate & { ID: number };

const INDEXED = ['MLSNumber', 'Url'] as const;
export type IndexedField = (typeof INDEXED)[number];

export class ChatbotListings {
  private readonly byId = new Map<number, StoredListing>();
  private readonly byKey: Record<IndexedField, Map<string, Set<number>>> = { MLSNumber: new Map(), Url: new Map() };
  /** IDs ascending; undefined once a delete (or an ID out of order) made it stale, rebuilt on the next read */
  private order: number[] | undefined = [];
  private maxId = 0;
  /** byId's insertion order is ID order: false only after a hand-edited data file listed IDs out of order */
  private idOrdered = true;

  get size(): number {
    return this.byId.size;
  }

  get(id: number): StoredListing | undefined {
    return this.byId.get(id);
  }

  /** in insertion order, as stored (what the data file and ClientAsk see) */
  values(): IterableIterator<StoredListing> {
    return this.byId.values();
  }

  /** adds a listing, or replaces the one with its ID in place */
  put(listing: StoredListing): void {
    const old = this.byId.get(listing.ID);
    if (old) this.unindex(old);
    else if (listing.ID >= this.maxId) {
      this.maxId = listing.ID;
      this.order?.push(listing.ID);
    } else {
      this.idOrdered = false;
      this.order = undefined;
    }
    this.byId.set(listing.ID, listing);
    for (const field of INDEXED) {
      const byValue = this.byKey[field];
      const ids = byValue.get(listing[field]);
      if (ids) ids.add(listing.ID);
      else byValue.set(listing[field], new Set<number>().add(listing.ID));
    }
  }

  delete(id: number): boolean {
    const old = this.byId.get(id);
    if (!old) return false;
    this.byId.delete(id);
    this.unindex(old);
    // Rebuilt on the next read: one O(n) pass after a batch of deletes, not a splice per delete.
    this.order = undefined;
    return true;
  }

  /** listings whose field equals value, in ID order */
  withKey(field: IndexedField, value: string): StoredListing[] {
    const ids = this.byKey[field].get(value);
    if (!ids) return [];
    return [...ids].sort((a, b) => a - b).map((id) => this.byId.get(id)!);
  }

  /** the listings at positions [start, end) in ID order */
  slice(start: number, end: number): StoredListing[] {
    return this.ids()
      .slice(start, end)
      .map((id) => this.byId.get(id)!);
  }

  /** every listing in ID order (for the filters that scan) */
  inOrder(): Iterable<StoredListing> {
    return this.idOrdered ? this.byId.values() : this.ids().map((id) => this.byId.get(id)!);
  }

  private ids(): number[] {
    if (!this.order) {
      this.order = [...this.byId.keys()];
      if (!this.idOrdered) this.order.sort((a, b) => a - b);
    }
    return this.order;
  }

  private unindex(listing: StoredListing): void {
    for (const field of INDEXED) {
      const ids = this.byKey[field].get(listing[field]);
      ids?.delete(listing.ID);
      if (ids?.size === 0) this.byKey[field].delete(listing[field]);
    }
  }
}
