// One OData page of a RESO server, fetched whole before any record of it is handed on, so a page
// whose body breaks off (or is not JSON) is simply asked for again: nothing is replayed. Bounded: a
// page's bytes and records are capped. Auth: a static bearer token, or OAuth2 client credentials
// with one token refresh on a 401; a 401 that a fresh token does not cure fails the read, naming
// the credential to fix. Every request sent (each retry and redirect hop) and every token call is
// counted in the read's tally (reso-requests.ts), by what it was for.
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { AbortedError, causeMessage, FeedReadError, formatPlace, printable } from '../../errors.js';
import { registerUrlSecrets } from '../../secrets.js';
import { bodyKind, firstLineOf } from '../sniff.js';
import type { ResoSource } from '../config-schema.js';
import { displayUrl, httpGet } from '../source/http.js';
import { BEARER_KEY, credentialCheck, NO_CREDENTIAL_KEY, OAUTH2_KEY } from './credential-check.js';
import { oauth2TokenSource, type TokenSource } from './oauth2.js';
import { requestTally, type RequestKind, type RequestTally } from './reso-requests.js';
import { sourceBudget } from '../source/source-budget.js';
import type { FeedContext } from '../types.js';

const Page = z.looseObject({
  value: z.array(z.unknown()),
  '@odata.nextLink': z.string().optional(),
});
export type Page = z.infer<typeof Page>;

export interface PageClient {
  /** the page at `url`; `what` names it in errors ("page 3"); `kind` what it is for (the client's kind by default) */
  get(url: string, what: string, kind?: RequestKind): Promise<Page>;
  /** a document that is not a page (the service's `$metadata`), as text, within source.maxPageBytes */
  text(url: string, what: string, kind?: RequestKind): Promise<string>;
  /** requests this client sent so far (each retry and redirect hop included; token calls not) */
  readonly requests: number;
  /** the requests and token calls of the whole read, this client's among them */
  readonly tally: RequestTally;
  /** bytes of the answers read whole so far (after gunzip) */
  readonly bytes: number;
  /** the server's clock (epoch ms) by the Date header of its first answer, when it sent one */
  readonly serverTime: number | undefined;
  /** the headers of the last page answered (feed probe reads compression and quota headers) */
  readonly lastHeaders: Headers | undefined;
}

/** An answer's text read as what was asked (a page, a document); `place` names it in errors. */
type Parse<T> = (text: string, place: { file: string; record: string }) => T;

export interface PageClientOptions {
  backoffMs?: number;
  scope?: string;
  /** the read's tally, shared with its other clients (a new one by default) */
  tally?: RequestTally;
  /** what this client's requests are for, unless a call says (default 'pages'; `text` 'metadata') */
  kind?: RequestKind;
}

export function resoPageClient(source: ResoSource, ctx: FeedContext, options: PageClientOptions = {}): PageClient {
  const tally = options.tally ?? requestTally();
  // (the configured URL's userinfo and ?token= values, once: httpGet registers none of the URLs asked, built or linked)
  registerUrlSecrets(source.url);
  const headers: Record<string, string> = { accept: 'application/json', ...source.headers };
  if (source.maxPageSize) headers.prefer = `odata.maxpagesize=${source.maxPageSize}`;
  const tokens = tokenSource(source, ctx, options, tally);
  const conn: Conn = {
    source,
    ctx,
    options,
    tally,
    tokens,
    credential: tokens?.credential ?? (source.bearerToken ? 'the bearer token of source.bearerToken' : undefined),
    budget: sourceBudget(source, ctx),
    seen: { requests: 0, bytes: 0, serverTime: undefined, lastHeaders: undefined },
  };
  const { seen } = conn;
  return {
    get: (url, what, kind = options.kind ?? 'pages') =>
      fetchAs(conn, { url, what, kind, headers, cap: capsOf(source).page }, (text, place) =>
        parsePage(text, place, source.maxPageRecords),
      ),
    text: (url, what, kind = 'metadata') =>
      fetchAs(
        conn,
        { url, what, kind, headers: { ...headers, accept: 'application/xml' }, cap: capsOf(source).metadata },
        (t) => t,
      ),
    get requests() {
      return seen.requests;
    },
    tally,
    get bytes() {
      return seen.bytes;
    },
    get serverTime() {
      return seen.serverTime;
    },
    get lastHeaders() {
      return seen.lastHeaders;
    },
  };
}

/** A page client's source, credentials and budget, and what it has seen so far. */
interface Conn {
  source: ResoSource;
  ctx: FeedContext;
  options: PageClientOptions;
  tally: RequestTally;
  tokens: TokenSource | undefined;
  credential: string | undefined;
  budget: ReturnType<typeof sourceBudget>;
  seen: { requests: number; bytes: number; serverTime: number | undefined; lastHeaders: Headers | undefined };
}

/** One answer asked for: where, named how in errors, counted as what, with which headers, within what cap. */
interface Ask {
  url: string;
  what: string;
  kind: RequestKind;
  headers: Record<string, string>;
  cap: Cap;
}

/** the answer at `url` read whole, then parsed (an unreadable body, or a page that is not JSON, is asked for again) */
async function fetchAs<T>(conn: Conn, ask: Ask, parse: Parse<T>): Promise<T> {
  const { source, ctx, tokens } = conn;
  const place = { file: displayUrl(ask.url), record: ask.what };
  let refreshed = false;
  for (let attempt = 0; ; attempt++) {
    const token = tokens ? await tokens.token() : source.bearerToken;
    try {
      return parse(await readOnce(conn, ask, token, place), place);
    } catch (err) {
      if (err instanceof FeedReadError && err.status === 401) {
        if (tokens && token && !refreshed) {
          // an expired or revoked token: one fresh token, then the same page again
          tokens.refused(token);
          refreshed = true;
          attempt--;
          continue;
        }
        throw unauthorized(err, place, { tokens, credential: conn.credential, refreshed });
      }
      if (!(err instanceof PageBodyError) || attempt >= source.retries)
        throw onPage(settled(err, source.retries), place, source.retries);
      ctx.logger.warn(
        { url: place.file, page: ask.what, attempt: attempt + 1 },
        `RESO page unreadable, asking for it again: ${err.message}`,
      );
      await sleep((conn.options.backoffMs ?? 500) * 2 ** attempt, undefined, { signal: ctx.signal }).catch((e) => {
        throw new AbortedError(`GET ${place.file}`, e);
      });
    }
  }
}

/** One request's answer, read whole within its cap, its requests counted. */
async function readOnce(
  conn: Conn,
  ask: Ask,
  token: string | undefined,
  place: { file: string; record: string },
): Promise<string> {
  const { source, ctx, seen } = conn;
  const { body, cancel, response } = await httpGet(ask.url, {
    headers: ask.headers,
    bearerToken: token,
    tokenIssued: conn.tokens !== undefined,
    timeoutMs: source.timeoutMs,
    retries: source.retries,
    maxCompressionRatio: source.maxCompressionRatio,
    signal: ctx.signal,
    logger: ctx.logger,
    backoffMs: conn.options.backoffMs,
    budget: conn.budget,
    onRequest: () => {
      seen.requests++;
      conn.tally.sent(ask.kind);
    },
  });
  seen.lastHeaders = response.headers;
  seen.serverTime ??= serverDate(response.headers);
  const text = await readCapped(body, cancel, ask.cap, place);
  const n = Buffer.byteLength(text);
  seen.bytes += n;
  conn.tally.received(n);
  return text;
}

/** The server's clock by an answer's Date header, when it sent one. */
function serverDate(headers: Headers): number | undefined {
  const date = Date.parse(headers.get('date') ?? '');
  return Number.isFinite(date) ? date : undefined;
}

/** A 401 that a fresh token did not cure (or with no token to refresh): the read fails, naming the credential to fix. */
function unauthorized(
  err: FeedReadError,
  place: { file: string; record: string },
  auth: { tokens: TokenSource | undefined; credential: string | undefined; refreshed: boolean },
): FeedReadError {
  const { tokens, credential, refreshed } = auth;
  const credentialKey = tokens ? OAUTH2_KEY : credential ? BEARER_KEY : NO_CREDENTIAL_KEY;
  const refused = credential
    ? `refused ${credential}${refreshed ? ', even with a fresh token' : ''}`
    : 'asks for credentials';
  return new FeedReadError(`the RESO server ${refused} (HTTP 401); ${credentialCheck(credentialKey)}`, place, false, {
    cause: err,
    status: 401,
    credentialKey,
  });
}

/** The source's OAuth2 tokens (none without source.auth), their calls counted in the read's tally. */
function tokenSource(
  source: ResoSource,
  ctx: FeedContext,
  options: PageClientOptions,
  tally: RequestTally,
): TokenSource | undefined {
  if (!source.auth) return undefined;
  return oauth2TokenSource(source.auth, {
    ...(options.scope !== undefined && { scope: options.scope }),
    timeoutMs: source.timeoutMs,
    retries: source.retries,
    signal: ctx.signal,
    backoffMs: options.backoffMs,
    onCall: () => tally.tokenCall(),
  });
}

/** An error of the HTTP layer, which knows the URL only, said of the page it was reading ("page 2"). */
function onPage(err: unknown, place: { file: string; record: string }, retries: number): unknown {
  if (!(err instanceof FeedReadError) || err.place.record !== undefined) return err;
  const prefix = `${formatPlace(err.place)}: `;
  const reason = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  const tries = err.retryable && retries > 0 ? ` (after ${retries} ${retries === 1 ? 'retry' : 'retries'})` : '';
  return new FeedReadError(`the server answered ${reason}${tries}`, place, err.retryable, {
    cause: err,
    ...(err.status !== undefined && { status: err.status }),
    ...(err.retryAt && { retryAt: err.retryAt }),
    ...(err.credentialKey && { credentialKey: err.credentialKey }),
  });
}

/** A page body that broke off or does not parse: asking for the page again can help. */
class PageBodyError extends FeedReadError {}

/** A page that was still not an OData page when asked for the last time: the server's answer is not the feed (refused, no retry helps). */
function settled(err: unknown, retries: number): unknown {
  if (!(err instanceof PageBodyError) || !err.refused) return err;
  const prefix = `${formatPlace(err.place)}: `;
  const reason = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  return new FeedReadError(`${reason}${retries > 0 ? ` (asked ${retries + 1} times)` : ''}`, err.place, false, {
    cause: err,
    refused: true,
  });
}

/** A page's cap, and `$metadata`'s: parsed as a whole document, kept well below a page's. */
function capsOf(source: ResoSource): { page: Cap; metadata: Cap } {
  return {
    page: { bytes: source.maxPageBytes, setting: 'source.maxPageBytes', what: 'the page' },
    metadata: {
      bytes: Math.min(source.maxMetadataBytes, source.maxPageBytes),
      setting: 'source.maxMetadataBytes',
      what: "the server's $metadata",
      hint: "; it was not read (a whole Data Dictionary's is a few MB: raise source.maxMetadataBytes if this server's is genuinely larger)",
    },
  };
}

/** The most bytes an answer may hold, and the setting that says so (named when one is larger). */
interface Cap {
  bytes: number;
  setting: string;
  what: string;
  /** what to do, after the figure */
  hint?: string;
}

async function readCapped(
  body: AsyncIterable<Uint8Array>,
  cancel: () => void,
  cap: Cap,
  place: { file: string; record: string },
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of body) {
      size += c.byteLength;
      if (size > cap.bytes) {
        cancel();
        throw new FeedReadError(
          `${cap.what} is larger than ${cap.setting} (${cap.bytes} bytes)${cap.hint ?? ''}`,
          place,
          false,
        );
      }
      chunks.push(Buffer.from(c));
    }
  } catch (err) {
    if (err instanceof FeedReadError && err.retryable)
      throw new PageBodyError(causeMessage(err), place, true, { cause: err });
    throw err;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What a JSON answer holds instead of a page: an OData error's code and message, else its keys. */
function jsonHolds(json: unknown): string {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return `got ${Array.isArray(json) ? 'a list' : json === null ? 'null' : typeof json}`;
  const error = (json as { error?: unknown }).error;
  if (error && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const said = [code, message]
      .filter((v) => typeof v === 'string' || typeof v === 'number')
      .map((v) => printable(String(v).slice(0, 160)));
    if (said.length) return `got an OData error: ${said.join(': ')}`;
  }
  const keys = Object.keys(json)
    .slice(0, 10)
    .map((k) => printable(k.slice(0, 40)));
  return keys.length ? `got an object of ${keys.join(', ')}` : 'got an empty object';
}

function parsePage(text: string, place: { file: string; record: string }, maxRecords: number): Page {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const kind = bodyKind(text.slice(0, 512));
    throw new PageBodyError(
      `HTTP 200 with ${kind ?? 'a body that is not JSON'}, not an OData page (${causeMessage(err)}): it starts \`${firstLineOf(text.slice(0, 512))}\``,
      place,
      true,
      {
        cause: err,
        refused: true,
      },
    );
  }
  return checkPage(json, place, maxRecords);
}

export function checkPage(json: unknown, place: { file: string; record?: string }, maxRecords: number): Page {
  const r = Page.safeParse(json);
  if (!r.success)
    throw new FeedReadError(
      `JSON that is not an OData page: expected { "value": [...] }, ${jsonHolds(json)}`,
      place,
      false,
      { refused: true },
    );
  if (r.data.value.length > maxRecords) {
    throw new FeedReadError(
      `the page holds ${r.data.value.length} records, more than source.maxPageRecords (${maxRecords})`,
      place,
      false,
    );
  }
  return r.data;
}
