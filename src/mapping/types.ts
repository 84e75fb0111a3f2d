// What the mapper hands on: one item per feed item, in feed order.
import type { RecordParseError, ValidationIssue } from '../errors.js';
import type { FeedItem, RecordPosition } from '../feeds/types.js';
import type { ListingCreate, ListingField } from '../listing/schema.js';
import type { HideRule } from './display-config.js';

/** What the display rules did to a listing shown: its address withheld; a Closed listing's window end (ISO) */
export interface ShownBy {
  addressWithheld?: true;
  until?: string;
}

/**
 * A feed item carrying its listing key as the feed's mapping reads it (item-key.ts itemKey), read
 * once where the sync takes the item in; undefined: the item names none.
 */
export type KeyedItem = FeedItem & { readonly key: string | undefined };

export type MappedItem =
  /** `replaced`: fields whose value broke the rules and was replaced by the rule's default (onInvalid: default) */
  | {
      kind: 'listing';
      position: RecordPosition;
      key: string;
      listing: ListingCreate;
      replaced?: ListingField[];
      shown?: ShownBy;
    }
  /** the record broke the spec's rules; every issue is kept, and the key when it could be read; `held`: the display rules held it back (its attribution names a field it lacks) */
  | { kind: 'rejected'; position: RecordPosition; key?: string; issues: ValidationIssue[]; held?: true }
  /**
   * left out of the feed on purpose (off-market status etc.): mirror mode removes it remotely; `rule`:
   * a display rule hides it (display-rules.ts), removed from the chatbot at once whatever deletes.mode says
   */
  | { kind: 'skipped'; position: RecordPosition; key?: string; reason: string; rule?: HideRule }
  /** the source says the listing is gone (RESO MlgCanView: false) */
  | { kind: 'removed'; position: RecordPosition; key?: string }
  /** a record that could not be parsed; the key when it could be read from what was; `standalone` as the reader said (feeds/types.ts) */
  | { kind: 'error'; position: RecordPosition; key?: string; error: RecordParseError; standalone?: boolean };

export interface MapContext {
  serialNumber: string;
  keyBy: 'MLSNumber' | 'URL';
}
