// The report sections of a RESO feed's ways of reading (types.ts SourceSections): a keys-only
// reconcile's (`reconcile`) and an EntityEvent poll's or a run of pushed events' (`events`), each
// with the lines the text report prints of it.
import type { SourceSection } from '../types.js';

/** an EntityEvent poll: events read, distinct keys of the resource, records fetched by key, keys gone */
export interface EventStats {
  read: number;
  keys: number;
  fetched: number;
  gone: number;
  /** keys named by Media events (their listings) */
  media?: number;
  /** keys that named no listing: left to the next reconcile */
  unnamed?: number;
  /** why the log could not be read from the stored sequence (a reconcile ran instead) */
  purged?: string;
  /** the mark's own event was hidden by a later event of its record (RCP-027 compaction): the poll went on */
  compacted?: string;
  /** a run of pushed events (RCP-028), not a poll */
  pushed?: true;
}

/** a keys-only reconcile: keys read, and records fetched by key */
export interface ReconcileStats {
  keys: number;
  fetched: number;
}

declare module '../types.js' {
  interface SourceSections {
    /** an EntityEvent poll (`source.changes: entityEvent`), or (`pushed`) a run of pushed events (RCP-028, `POST /reso/events/<feed>`) */
    events: EventStats;
    /** a keys-only reconcile (`--reconcile`, or in place of a purged EntityEvent log) */
    reconcile: ReconcileStats;
  }
}

/** The EntityEvent section: what the log (or the push) named and what was fetched. */
export function eventsSection(e: EventStats): SourceSection {
  const media = e.media ? ` (${e.media} by Media events)` : '';
  const unnamed = e.unnamed ? ` (${e.unnamed} naming no listing: left to the next reconcile)` : '';
  const lines = [
    `${e.pushed ? 'pushed EntityEvents' : 'EntityEvent'}: ${e.read} events read, ${e.keys} keys${media}, ${e.fetched} records fetched by key, ${e.gone} gone${unnamed}`,
    ...(e.purged
      ? [`EntityEvent: ${e.purged}: a reconcile ran instead, and the log goes on from its newest event`]
      : []),
    ...(e.compacted ? [`EntityEvent: ${e.compacted}: the poll went on from the log`] : []),
  ];
  return { name: 'events', fields: { ...e }, lines, ...(e.pushed && { tellsTheRead: true as const }) };
}

/** The reconcile section: keys read, records fetched by key. */
export function reconcileSection(r: ReconcileStats): SourceSection {
  return {
    name: 'reconcile',
    fields: { ...r },
    lines: [`reconcile: ${r.keys} keys read, ${r.fetched} records fetched by key`],
  };
}
