// What a run's caller may ask of a live RESO source beyond its pull (types.ts SourceAsks): a keys-only
// reconcile (`--reconcile`, schedule.reconcileCron: reso-reconcile.ts) and a run of pushed events
// (RCP-028, the push job: reso-push.ts), whose keys name the records it reads.

/** What pushed EntityEvents (RCP-028) named, coalesced: the feed resource's keys, and Media records' keys. */
export interface PushedKeys {
  /** ResourceRecordKeys of the feed's resource (source.resource) */
  keys: readonly string[];
  /** ResourceRecordKeys of Media events (MediaKeys): their listings are fetched */
  media: readonly string[];
  /** events received for them before coalescing (a repeated key counts each time) */
  events: number;
}

declare module '../types.js' {
  interface SourceAsks {
    /** a keys-only reconcile instead of a pull: every key read, records fetched only for keys that changed */
    reconcile: object;
    /** a run of pushed events: the records they named fetched by key, no pull */
    pushed: PushedKeys & { readonly names: true };
  }
}

/** A keys-only reconcile, asked of the feed's source. */
export const reconcileAsk = { name: 'reconcile' } as const;

/** A run of pushed events, asked of the feed's source: the records they named, read by key. */
export const pushedAsk = (pushed: PushedKeys) => ({ name: 'pushed', names: true, ...pushed }) as const;
