// The six operations of the spec over the emulator's state. Each takes the request body already
// authenticated and validated by the shared schemas, and returns what to answer.
// Decisions where the spec is silent:
// - update and delete act on every listing matching the key (the service may hold duplicates of
//   one MLSNumber); update answers how many it changed (0 when none matched).
// - update replaces the listing with what it sends, whole: a field left out is unset afterwards (the
//   spec gives a number no null, so leaving it out is how a client clears it; docs/contracts.md).
// - NewOaks keys are the listing ID as a decimal string (what create returns).
// - ClientAsk over the rate limit (RateLimitCount asks within RateLimitTime seconds, per session) answers
//   normally with RateLimitMessage as content and noAnswer true; over the monthly MessageLimit it
//   fails with Code 403.
import type {
  AskRequest,
  ChatbotSettings,
  DeleteRequest,
  EditSettingsRequest,
  ListingCreate,
  ListingUpdate,
  ListItem,
  ListRequest,
  StreamFinal,
} from '../api/schemas.js';
import type { KeyType } from '../listing/schema.js';
import { composeAnswer, fragmentsOf, tokenCount } from './answer.js';
import type { ChatbotListings, StoredListing } from './chatbot-listings.js';
import { listItemJson, toListItem } from './list-item.js';
import type { ResolvedOptions } from './options.js';
import type { EmulatorState } from './state.js';

export type Reply =
  | { kind: 'data'; data: unknown }
  /** Data already serialized (a list page made of each item's kept JSON): sent as JSON.stringify would send `data` */
  | { kind: 'json'; json: string }
  | { kind: 'error'; code: number; message: string }
  | { kind: 'stream'; fragments: string[]; final: StreamFinal };

export interface EndpointContext {
  state: EmulatorState;
  opts: ResolvedOptions;
  /** note a change to persist */
  changed(): void;
  now(): number;
}

const DEFAULT_RATE_LIMIT_MESSAGE = 'You are sending messages too fast. Please wait a moment.';

export const data = (d: unknown): Reply => ({ kind: 'data', data: d });

/** The body of a reply that is not a stream: the service's envelope around its Data, as JSON. */
export function envelopeJson(reply: Exclude<Reply, { kind: 'stream' }>): string {
  // Data first, as JSON.stringify of the whole envelope puts it; a 'json' reply's Data is spliced in as it is
  const data =
    reply.kind === 'json' ? reply.json : (JSON.stringify(reply.kind === 'data' ? reply.data : null) ?? 'null');
  return `{"Data":${data},${reply.kind === 'error' ? envelopeRest(reply.code, reply.message) : SUCCESS_REST}`;
}

/** The envelope's fields after Data, without the opening brace: JSON.stringify's text of them. */
const envelopeRest = (code: number, message: string, success = false): string =>
  JSON.stringify({ Version: '1.0', Success: success, Code: code, Message: message }).slice(1);
/** (every success ends the same: made once, not per answer) */
const SUCCESS_REST = envelopeRest(200, '', true);
export const failure = (code: number, message: string): Extract<Reply, { kind: 'error' }> => ({
  kind: 'error',
  code,
  message,
});

export function unknownChatbot(ctx: EndpointContext, serialNumber: string): Reply | undefined {
  if (!ctx.opts.chatbots || ctx.opts.chatbots.includes(serialNumber)) return undefined;
  return failure(404, `chatbot ${serialNumber} not found`);
}

export function edit(ctx: EndpointContext, req: EditSettingsRequest): Reply {
  const { serialNumber, ...settings } = req;
  ctx.state.settings.set(serialNumber, { ...ctx.state.settings.get(serialNumber), ...settings });
  ctx.changed();
  return data(1);
}

export function create(ctx: EndpointContext, listing: ListingCreate): Reply {
  const ID = ctx.state.nextId++;
  ctx.state.listingsOf(listing.SerialNumber).put({ ...listing, ID });
  ctx.changed();
  return data(String(ID));
}

export function update(ctx: EndpointContext, req: ListingUpdate): Reply {
  const { Key, KeyType, ...listing } = req;
  const stored = ctx.state.listingsOf(listing.SerialNumber);
  const matches = matching(stored, KeyType, Key);
  for (const l of matches) stored.put({ ...listing, ID: l.ID });
  if (matches.length) ctx.changed();
  return data(matches.length);
}

export function list(ctx: EndpointContext, req: ListRequest): Reply {
  const stored = ctx.state.listingsOf(req.SerialNumber);
  const size = Math.min(req.PageSize ?? 20, ctx.opts.maxPageSize);
  const start = ((req.PageNumber ?? 1) - 1) * size;
  const city = req.CityName?.trim().toLowerCase();
  if (!city && !req.SaleType && !req.MLSNumber) {
    return {
      kind: 'json',
      json: `{"List":[${stored
        .slice(start, start + size)
        .map(listItemJson)
        .join(',')}],"VirtualCount":${stored.size}}`,
    };
  }
  const candidates = req.MLSNumber ? stored.withKey('MLSNumber', req.MLSNumber) : stored.inOrder();
  const items: ListItem[] = [];
  let count = 0;
  for (const l of candidates) {
    if (city && (l.City ?? '').trim().toLowerCase() !== city) continue;
    if (req.SaleType && l.SaleType !== req.SaleType) continue;
    // Only the page's items are serialized; the rest are just counted for VirtualCount.
    if (count >= start && count < start + size) items.push(toListItem(l));
    count++;
  }
  return data({ List: items, VirtualCount: count });
}

export function remove(ctx: EndpointContext, req: DeleteRequest): Reply {
  const stored = ctx.state.listingsOf(req.SerialNumber);
  let deleted = 0;
  for (const key of new Set(req.Keys)) {
    for (const l of matching(stored, req.KeyType, key)) {
      stored.delete(l.ID);
      deleted++;
    }
  }
  if (deleted) ctx.changed();
  return data({ SuccessCount: deleted });
}

function matching(stored: ChatbotListings, keyType: KeyType, key: string): StoredListing[] {
  if (keyType === 'NewOaks') {
    const l = /^\d+$/.test(key) ? stored.get(Number(key)) : undefined;
    return l ? [l] : [];
  }
  return stored.withKey(keyType === 'URL' ? 'Url' : 'MLSNumber', key);
}

/** Whether the session has used up RateLimitCount asks in the last RateLimitTime seconds (its older asks forgotten). */
function rateLimited(session: { asks: number[] }, settings: ChatbotSettings, now: number): boolean {
  const { RateLimitCount: maxAsks, RateLimitTime: windowSec } = settings;
  if (!(maxAsks && maxAsks > 0 && windowSec && windowSec > 0)) return false;
  session.asks = session.asks.filter((t) => t > now - windowSec * 1000);
  return session.asks.length >= maxAsks;
}

/** The chatbot's answer from the listings it shows (none hidden), or an empty one in answerMode empty. */
function answerOf(
  ctx: EndpointContext,
  sn: string,
  question: string,
  settings: ChatbotSettings,
): { content: string; noAnswer: boolean } {
  if (ctx.opts.answerMode === 'empty') return { content: '', noAnswer: true };
  const hidden = ctx.state.hidden.get(sn);
  const known = [...ctx.state.listingsOf(sn).values()].filter((l) => !hidden?.has(l.MLSNumber) && !hidden?.has(l.Url));
  const answer = composeAnswer(question, known);
  return { content: answer.text + (settings.AnswerSuffix ?? ''), noAnswer: !answer.found };
}

export function ask(ctx: EndpointContext, req: AskRequest): Reply {
  const session = ctx.state.sessions.get(req.sessionID);
  if (!session) return failure(404, `sessionID ${req.sessionID} not found (make one with POST /__emulator/sessions)`);
  const sn = session.serialNumber;
  const settings: ChatbotSettings = ctx.state.settings.get(sn) ?? {};
  const now = ctx.now();

  const limit = settings.MessageLimit ?? -1;
  const month = new Date(now).toISOString().slice(0, 7);
  const used = ctx.state.monthly.get(sn);
  const usedThisMonth = used?.month === month ? used.count : 0;
  if (limit >= 0 && usedThisMonth >= limit)
    return failure(403, `chatbot ${sn} reached its MessageLimit of ${limit} messages this month`);

  const questionId = ctx.state.nextMessageId++;
  const answerId = ctx.state.nextMessageId++;
  let content: string;
  let noAnswer: boolean;
  if (rateLimited(session, settings, now)) {
    content = settings.RateLimitMessage ?? DEFAULT_RATE_LIMIT_MESSAGE;
    noAnswer = true;
  } else {
    session.asks.push(now);
    ctx.state.monthly.set(sn, { month, count: usedThisMonth + 1 });
    ctx.changed();
    ({ content, noAnswer } = answerOf(ctx, sn, req.content, settings));
  }
  const totalToken = tokenCount(req.content, content);
  if (!req.stream) return data({ messageid: answerId, content, totalToken, noAnswer });
  return {
    kind: 'stream',
    fragments: fragmentsOf(content),
    final: { QuestionID: questionId, AnswerID: answerId, Answer: content, TotalToken: totalToken },
  };
}
