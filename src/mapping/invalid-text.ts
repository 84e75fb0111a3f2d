// Listings holding U+FFFD: the character a decoder puts where the bytes are not valid in the encoding
// the feed was read with (a latin1 or windows-1252 export read as utf8: "Caf\uFFFD"). Such a
// listing is sent as it is, so the chatbot answers with the broken text: `feed preview` and the sync
// report both say how many, the first place and field, and what to set. Counted on mapped listings
// only: a record in step by its stamp was counted when it was written.
import type { FeedSource } from '../feeds/config-schema.js';

const REPLACEMENT = '\uFFFD';

/** What a read found of it: how many listings, the first one's place and field. */
export interface InvalidText {
  records: number;
  first: string;
  field: string;
}

/** The first field of a listing whose value holds U+FFFD (in a string, or in a list's or object's strings), or undefined. */
export function invalidTextField(listing: object): string | undefined {
  // (its keys, not Object.entries: the same fields in the same order, without a [field, value]
  // array each: 1.2 KB a listing, the most any one step of a first sync's read allocated)
  const values = listing as Record<string, unknown>;
  for (const field of Object.keys(values)) if (holdsReplacement(values[field])) return field;
  return undefined;
}

function holdsReplacement(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(REPLACEMENT);
  if (Array.isArray(value)) return value.some(holdsReplacement);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsReplacement);
  return false;
}

/** Counts a mapped listing into `found` (made at the first one that holds U+FFFD); returns it. */
export function countInvalidText(
  found: InvalidText | undefined,
  listing: object,
  place: () => string,
): InvalidText | undefined {
  const field = invalidTextField(listing);
  if (field === undefined) return found;
  if (!found) return { records: 1, first: place(), field };
  found.records++;
  return found;
}

/** The encoding a feed is read with, as the warning names it. */
export function encodingOf(source: FeedSource): string {
  const set = 'encoding' in source ? source.encoding : undefined;
  return set ?? (source.kind === 'csv' ? 'utf8' : 'its declared encoding');
}

/** The warning, naming the encoding the feed was read with (encodingOf) and the setting that changes it. */
export function invalidTextWarning(found: InvalidText, encoding: string): string {
  return `${found.records} record(s) hold bytes that are not valid ${encoding} (read as U+FFFD; first: ${found.first}, ${found.field}): the file is in another encoding; set feeds[].source.encoding (csv: latin1 or windows-1252)`;
}
