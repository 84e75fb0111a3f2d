// The emulated chatbot's answer: deterministic, drawn from the chatbot's listings. It picks up a
// bedroom count ("3 bedroom", "3bd"), a city named in the question and for sale / for rent, and
// lists the matches; a question with none of those gets a summary of what the chatbot holds.
import type { StoredListing } from './chatbot-listings.js';

export interface ComposedAnswer {
  text: string;
  /** false: nothing to say (no listings, or none match): the service's noAnswer */
  found: boolean;
}

const SHOWN = 3;

export function composeAnswer(question: string, listings: StoredListing[]): ComposedAnswer {
  if (listings.length === 0) return { text: 'This chatbot has no listings yet.', found: false };
  const q = question.toLowerCase();
  // a question naming listings (by MLS number or street address) is answered about those
  const named = listings.filter((l) => mentions(q, l.MLSNumber) || (l.Address && mentions(q, l.Address)));
  if (named.length) return { text: `Here is what I know: ${describeSome(named)}.`, found: true };
  const beds = /(\d+)\s*-?\s*(?:bed|bd|br\b)/.exec(q)?.[1];
  const city = [...new Set(listings.map((l) => l.City?.trim()).filter((c): c is string => !!c))].find((c) =>
    q.includes(c.toLowerCase()),
  );
  const saleType = /\brent/.test(q) ? 'for_rent' : /\b(buy|sale|purchase)/.test(q) ? 'for_sale' : undefined;
  const criteria = [
    beds !== undefined && `${beds} bedrooms`,
    city && `in ${city}`,
    saleType && saleType.replace('_', ' '),
  ].filter(Boolean);
  const matches = listings.filter(
    (l) =>
      (beds === undefined || l.Bedrooms === Number(beds)) &&
      (!city || l.City?.trim().toLowerCase() === city.toLowerCase()) &&
      (!saleType || l.SaleType === saleType),
  );
  if (criteria.length === 0) {
    return { text: `I have ${count(listings.length)}. For example: ${describeSome(listings)}.`, found: true };
  }
  if (matches.length === 0) {
    return {
      text: `I found no listings (${criteria.join(', ')}); I have ${count(listings.length)} in all.`,
      found: false,
    };
  }
  return { text: `I found ${count(matches.length)} (${criteria.join(', ')}): ${describeSome(matches)}.`, found: true };
}

function mentions(question: string, text: string): boolean {
  const t = text.trim().toLowerCase();
  if (t.length < 3) return false;
  const at = question.indexOf(t);
  // whole words only: MLS "A1" is not named by "A12"
  return at >= 0 && !/[a-z0-9]/.test(question[at - 1] ?? '') && !/[a-z0-9]/.test(question[at + t.length] ?? '');
}

function count(n: number): string {
  return n === 1 ? '1 listing' : `${n} listings`;
}

function describeSome(listings: StoredListing[]): string {
  const shown = listings.slice(0, SHOWN).map(describe).join('; ');
  return listings.length > SHOWN ? `${shown}; and ${listings.length - SHOWN} more` : shown;
}

function describe(l: StoredListing): string {
  const place = `${[l.Address, l.City].filter(Boolean).join(', ') || 'a listing'}, MLS ${l.MLSNumber}`;
  const price = l.SaleType === 'for_rent' ? l.RentPrice : l.SalePrice;
  const priceText =
    price !== undefined
      ? `, ${l.CurrencySymbol}${price.toLocaleString('en-US')}${l.SaleType === 'for_rent' ? '/month' : ''}`
      : '';
  return `${place} (${l.Bedrooms} bd, ${l.Bathrooms} ba${priceText})`;
}

/** Splits an answer into fragments of a few words, whitespace kept, so they join back exactly. */
export function fragmentsOf(text: string, wordsPerFragment = 3): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerFragment) out.push(words.slice(i, i + wordsPerFragment).join(''));
  return out;
}

/** A rough token count, as the service reports one: never 0 for a real exchange. */
export function tokenCount(question: string, answer: string): number {
  return Math.max(1, Math.ceil((question.length + answer.length) / 4));
}
