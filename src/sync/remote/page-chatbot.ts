// Step "page" of a chatbot run (docs/design.md): the chatbot's listings, paged once for every lane
// of the run that writes into it (remote.ts), and its sync state read meanwhile (settle/state.ts
// readChatbotState, begun by the run: paging leaves the main thread idle between pages; the
// caller's chatbot lock keeps other runs from writing it).
// A paging that fails ends every lane of the chatbot with the failure; the other chatbots go on.
import type { ChatbotApi } from '../../api/types.js';
import type { ApiConfig } from '../../config/schema.js';
import { ApiError, causeMessage, effectiveStatus } from '../../errors.js';
import { refusalOf, type Refusal } from '../model/refusal.js';
import type { Lane } from '../model/lane.js';
import type { EchoFiles } from './page-echo.js';
import type { RemoteSide } from '../model/plan-types.js';
import type { RemoteIndex } from './remote-index.js';
import type { Logger } from '../../log.js';
import { fetchRemote, fetchRemoteKeys, type RemoteOptions } from './remote.js';
import { thrownOutcome, type SyncOutcome } from '../model/outcome.js';
import type { ChatbotFeed, ChatbotState, ChatbotStateRead } from '../model/state-names.js';

export type { ChatbotStateRead } from '../model/state-names.js';

export type ChatbotRemote = RemoteSide & { byKey: RemoteIndex };

export type PagedChatbot =
  | { ok: true; remote: ChatbotRemote; state: ChatbotState; stamps: Map<string, ReadonlyMap<string, string>> }
  | {
      ok: false;
      outcome: SyncOutcome;
      /** what went wrong, said for a person; none when a credential was refused (`refused`: the run words it) */
      message?: string;
      refused?: Refusal;
      problem: string;
    };

export interface PageChatbotInput {
  api: ChatbotApi;
  apiConfig: ApiConfig;
  chatbot: string;
  /** the run's lanes into this chatbot */
  lanes: readonly Lane[];
  /** every lane of the config into this chatbot: the others' listings are left alone */
  writers: readonly ChatbotFeed[];
  /** keep each listing's compared JSON (a dry run, a change log: changed fields named old → new) */
  keepCompared: boolean;
  echoFiles?: EchoFiles;
  signal: AbortSignal;
  /** what went wrong, said for a person, when the signal was the run's deadline */
  deadlineMessage(): string | undefined;
  /** whose calls the paging's are (CallOptions.scope) */
  callScope?: string;
  /** where the paging's one warning goes (scoped by the chatbot here): the change log's compared JSON kept in memory, its temporary file failed */
  logger?: Logger;
  /**
   * a run of pushed events: the listing keys its records name, once read; only their copies are
   * asked of the chatbot (remote.ts fetchRemoteKeys), not its whole list. A chatbot keyed by URL is
   * paged whole all the same: the list endpoint filters by MLSNumber, CityName and SaleType, not Url.
   */
  keys?: Promise<ReadonlySet<string>>;
}

/**
 * A paging under way (startPaging): its state read, its index as soon as paging has made it (a feed
 * read beside the paging asks it what is paged so far: RemoteIndex.pagedCopy), and its end.
 */
export interface PagingHandle {
  state: Promise<ChatbotStateRead>;
  /** the index paging fills; undefined when paging failed before it had one */
  index: Promise<RemoteIndex | undefined>;
  done: Promise<PagedChatbot>;
}

/**
 * Chatbots a run pages at once (sync-run.ts), started in the run's order. A chatbot of a few pages
 * is paged in a round trip or two, each leaving the api.concurrency slots idle but one: a routed
 * feed's 100 small chatbots paged one at a time were 200 round trips end to end, and a fleet's
 * no-change tick waited for them rather than for its budget. Past a few at once, a large chatbot's
 * paging only shares the slots its own pages would fill (the budget holds api.concurrency calls in
 * flight over all of them), and each paging in progress holds the pages it asked for (up to
 * PAGES_AHEAD × api.concurrency, remote.ts) and up to 8 MiB of compared JSON: the bound.
 */
export const PAGINGS_AT_ONCE = 8;

/**
 * The turns of a run's pagings, in order: the n-th one given `turn()` may start once the
 * (n − atOnce)-th has settled; `all()`: every paging given so far has settled (failed or not).
 */
export function pagingTurns(atOnce = PAGINGS_AT_ONCE): {
  turn(): Promise<unknown>;
  ended(done: Promise<unknown>): void;
  all(): Promise<void>;
} {
  const dones: Array<Promise<unknown>> = [];
  return {
    turn: () => dones[dones.length - Math.max(1, atOnce)] ?? Promise.resolve(),
    // (only its settling counts here: a paging's failure is its handle's, awaited by its lanes)
    ended: (done) => void dones.push(done.catch(() => undefined)),
    all: () => Promise.all(dones).then(() => undefined),
  };
}

/** The chatbot's paging once `after` has settled (pagingTurns: a few chatbots at a time), with its state as read meanwhile. */
export function startPaging(
  input: PageChatbotInput,
  after: Promise<unknown>,
  state: Promise<ChatbotStateRead>,
): PagingHandle {
  let made: (index: RemoteIndex | undefined) => void = () => undefined;
  const index = new Promise<RemoteIndex | undefined>((resolve) => (made = resolve));
  const done = after.then(() => pageChatbot(input, state, made)).finally(() => made(undefined));
  return { state, index, done };
}

/** The paging itself, its index handed to `onIndex` as soon as there is one; with the state read, once both are done. */
async function pageChatbot(
  input: PageChatbotInput,
  stateRead: Promise<ChatbotStateRead>,
  onIndex: (index: RemoteIndex) => void,
): Promise<PagedChatbot> {
  const { chatbot, lanes, writers, signal } = input;
  let remote: ChatbotRemote;
  const keyBy = lanes[0]!.feed.keyBy;
  const options: RemoteOptions & { onIndex: typeof onIndex } = {
    onIndex,
    ...(input.callScope !== undefined && { callScope: input.callScope }),
    serialNumber: chatbot,
    // the remote side is keyed as the run's first lane keys (planning reads the other key when a lane keys by it)
    keyBy,
    pageSize: input.apiConfig.pageSize,
    maxPages: input.apiConfig.maxPages,
    concurrency: input.apiConfig.concurrency,
    signal,
    ignore: new Set(lanes[0]!.feed.ignore),
    keepCompared: input.keepCompared,
    keepOtherKey: writers.some((w) => w.keyBy !== keyBy),
    ...(input.echoFiles && { echoFiles: input.echoFiles }),
    ...(input.logger && { logger: input.logger.child({ chatbot }) }),
  };
  try {
    // (a run of pushed events asks only its keys' copies, where the list can be filtered by them)
    const keys = await input.keys;
    if (keys && keyBy === 'MLSNumber') remote = await fetchRemoteKeys(input.api, { ...options, keys });
    // (a URL-keyed chatbot of a pushed run is paged whole, but the run concludes nothing of keys it was not pushed)
    else remote = { ...(await fetchRemote(input.api, options)), ...(keys && { asked: keys }) };
  } catch (err) {
    const outcome: SyncOutcome = thrownOutcome(err, signal);
    const problem = causeMessage(err);
    const refused = refusalOf(err, lanes[0]!.feed.name);
    if (refused) return { ok: false, outcome, refused, problem };
    const deadline = input.deadlineMessage();
    const message = `${deadline ? `${deadline}; ` : ''}the chatbot's listings could not be paged: ${problem}${notFoundHint(err, input)}; nothing was written`;
    return { ok: false, outcome, message, problem };
  }
  const { state, stamps } = await stateRead;
  return { ok: true, remote, state, stamps };
}

/**
 * A list call answered "not found" (404, as errors.ts effectiveStatus reads an answer): most often a serial number the account
 * does not have (a typo, a chatbot of another account or one deleted), which only the config can
 * fix: named where the config writes it.
 */
function notFoundHint(err: unknown, input: Pick<PageChatbotInput, 'chatbot' | 'lanes'>): string {
  if (!(err instanceof ApiError) || effectiveStatus(err.httpStatus, err.apiCode) !== 404) return '';
  const where = input.lanes[0]?.feed.chatbots ? 'feeds[].chatbots[].serialNumber' : 'feeds[].chatbot';
  return `; check that ${input.chatbot} (${where}) is a chatbot of the account whose keys api.secretKey and api.sessionKey are`;
}
