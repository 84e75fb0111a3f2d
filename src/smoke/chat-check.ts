// The chat check: after a sync, ask the chatbot (message endpoint, the smoke session) about a few
// listings that run just created or changed, by MLS number and address, and check that each answer
// names the listing and its price. "answerable 3/3" goes into the report, the run history and the
// alerts; a listing the chatbot cannot answer about is named.
import type { ChatbotApi } from '../api/types.js';
import { byCodeUnit } from '../compare.js';
import { causeMessage } from '../errors.js';
import type { Headline, ListingChange } from '../sync/index.js';

export interface ChatCheckResult {
  asked: number;
  answerable: number;
  /** keys of the listings the chatbot could not answer about */
  missing: string[];
  results: Array<{ key: string; question: string; ok: boolean; reason?: string; answer?: string }>;
}

export interface ChatCheckOptions {
  sessionId: number;
  listings: number;
  signal?: AbortSignal;
}

/**
 * The listings asked about: created or updated ones with something to ask (an address or a price),
 * each once, the first `n` by key, so a run asks about the same listings in the same order however
 * its concurrent writes were acknowledged (`changes` is in the order the answers came).
 */
export function pickListings(changes: readonly ListingChange[], n: number): Array<{ key: string; headline: Headline }> {
  const askable = new Map<string, Headline>();
  for (const c of changes) {
    if ((c.op !== 'create' && c.op !== 'update') || !c.headline || askable.has(c.key)) continue;
    const h = c.headline;
    if (h.Address || h.SalePrice !== undefined || h.RentPrice !== undefined) askable.set(c.key, h);
  }
  return [...askable]
    .sort(([a], [b]) => byCodeUnit(a, b))
    .slice(0, n)
    .map(([key, headline]) => ({ key, headline }));
}

function questionFor(key: string, h: Headline): string {
  const where = h.Address ? ` at ${h.Address}${h.City ? `, ${h.City}` : ''}` : '';
  return `What can you tell me about the listing MLS ${h.MLSNumber ?? key}${where}? What is its price?`;
}

/** Why an answer does not show the chatbot knows the listing, or undefined when it does. */
export function judgeAnswer(answer: string, key: string, h: Headline): string | undefined {
  const text = answer.toLowerCase();
  const price = h.SaleType === 'for_rent' ? (h.RentPrice ?? h.SalePrice) : (h.SalePrice ?? h.RentPrice);
  const problems: string[] = [];
  if (h.Address && !text.includes(h.Address.toLowerCase()))
    problems.push(`the address ${JSON.stringify(h.Address)} is not in the answer`);
  if (!h.Address && !text.includes((h.MLSNumber ?? key).toLowerCase()))
    problems.push(`MLS ${h.MLSNumber ?? key} is not in the answer`);
  if (price !== undefined && !mentionsPrice(answer, price)) problems.push(`the price ${price} is not in the answer`);
  return problems.length ? problems.join('; ') : undefined;
}

/** A number as people write prices: "425,000", "425000.00", "$425K", "1.2 million", "$1.25M". */
const AMOUNT = /(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(thousand|million|billion|k|mm|m|bn|b)?(?![a-z])/gi;
const SCALE: Record<string, number> = {
  thousand: 1e3,
  k: 1e3,
  million: 1e6,
  mm: 1e6,
  m: 1e6,
  billion: 1e9,
  bn: 1e9,
  b: 1e9,
};

/**
 * Whether the answer names the price: a number equal to it, or a rounded form of it ("$1.2
 * million" for 1,195,000: within half of the last written digit). A longer number that merely
 * contains the digits (10000 for 1000) does not count.
 */
export function mentionsPrice(answer: string, price: number): boolean {
  for (const m of answer.matchAll(AMOUNT)) {
    const [, whole = '', fraction = '', suffix] = m;
    const scale = suffix ? (SCALE[suffix.toLowerCase()] ?? 1) : 1;
    const value = Number(`${whole.replace(/,/g, '')}.${fraction || '0'}`) * scale;
    // written without a scale the number is the price itself (cents aside); with one, a rounding of it
    const slack = suffix ? (scale * 10 ** -fraction.length) / 2 : 0.005;
    if (Math.abs(value - price) <= slack) return true;
  }
  return false;
}

export async function chatCheck(
  api: ChatbotApi,
  changes: readonly ListingChange[],
  opts: ChatCheckOptions,
): Promise<ChatCheckResult> {
  const picked = pickListings(changes, opts.listings);
  const results: ChatCheckResult['results'] = [];
  for (const { key, headline } of picked) {
    const question = questionFor(key, headline);
    try {
      // one attempt, like the smoke: a retry would hide the flaky answer this is here to notice
      const a = await api.ask({ sessionID: opts.sessionId, content: question }, { signal: opts.signal, retry: false });
      const reason = a.noAnswer ? 'the chatbot had no answer' : judgeAnswer(a.content, key, headline);
      results.push({ key, question, ok: !reason, ...(reason && { reason }), answer: a.content.slice(0, 500) });
    } catch (err) {
      results.push({ key, question, ok: false, reason: `the message endpoint failed: ${causeMessage(err)}` });
    }
  }
  const missing = results.filter((r) => !r.ok).map((r) => r.key);
  return { asked: results.length, answerable: results.length - missing.length, missing, results };
}
