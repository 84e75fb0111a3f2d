// OAuth2 client credentials (Trestle / CoreLogic): POST the token URL with the client id and secret,
// get a bearer token valid for `expires_in` seconds. Tokens are cached per credential in the process,
// so every job of a worker shares one token, and fetched again only shortly before expiry or when
// the server refused the cached one (a 401). Concurrent jobs wait for one token request. The
// request has the bounds of every other (net/request.ts): a total deadline, a byte cap, and no
// redirect followed.
import { credentialCheck, OAUTH2_KEY } from './credential-check.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { AbortedError, causeMessage, FeedReadError, isRetryableStatus } from '../../errors.js';
import { boundedRequest, RequestStopped } from '../../net/request.js';
import { forgetSecret, maskSecrets, registerSecret, tokenLike } from '../../secrets.js';
import type { OAuth2Auth } from '../config-schema.js';
import { errorBodyMessage } from '../source/error-body.js';

const TokenAnswer = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().positive().optional(),
});

/** A token is renewed this long before it expires (at most a tenth of its life). */
const RENEW_BEFORE_MS = 5 * 60_000;
/**
 * A token is used at least this long, whatever `expires_in` says (an `expires_in: 0.001` would cost
 * a token request per page); a token the server refuses before then is asked for again (refused()).
 */
const MIN_REUSE_MS = 60_000;
/** Lifetime assumed when the token endpoint gives no expires_in. */
const DEFAULT_LIFETIME_S = 3600;
/** Most bytes of a token answer read (a token endpoint answers a few hundred). */
const MAX_TOKEN_BYTES = 64 * 1024;

interface Cached {
  token: string;
  renewAt: number;
  /** the token is forgotten (cache and secret registry) after this */
  expiresAt: number;
}

/** Per credential: the token request in flight or done, and its token once it came. */
interface Entry {
  pending: Promise<Cached>;
  value?: Cached;
}

const cache = new Map<string, Entry>();

export interface TokenOptions {
  /** the feed the token is for: its value masks that feed's outputs only */
  scope?: string;
  timeoutMs: number;
  retries: number;
  signal?: AbortSignal;
  /** base delay of the backoff between failed token requests (tests make it small) */
  backoffMs?: number;
  /** told of every call of the token endpoint (each attempt): the run's token calls */
  onCall?: () => void;
}

export interface TokenSource {
  /** the credential as a person can name it in config (never the secret) */
  readonly credential: string;
  /** a valid token: the cached one, or a new one when none is cached or it is about to expire */
  token(): Promise<string>;
  /** the server refused `token`: forget it, so the next token() asks for a new one */
  refused(token: string): void;
}

export function oauth2TokenSource(auth: OAuth2Auth, opts: TokenOptions): TokenSource {
  registerSecret(auth.clientSecret);
  // the secret is part of the key: a rotated secret in config gets its own token
  const key = JSON.stringify([auth.tokenUrl, auth.clientId, auth.scope ?? '', auth.clientSecret]);
  const url = new URL(auth.tokenUrl);
  const credential = `OAuth2 client ${JSON.stringify(auth.clientId)} of ${url.origin}${url.pathname}`;
  return {
    credential,
    async token() {
      forgetExpired();
      const entry = cache.get(key);
      if (entry && !entry.value) return remember((await entry.pending).token, opts.scope ?? credential); // another job is asking: share its answer
      if (entry?.value && Date.now() < entry.value.renewAt)
        return remember(entry.value.token, opts.scope ?? credential);
      const fresh: Entry = { pending: requestToken(auth, credential, opts) };
      cache.set(key, fresh);
      try {
        fresh.value = await fresh.pending;
        return remember(fresh.value.token, opts.scope ?? credential);
      } catch (err) {
        if (cache.get(key) === fresh) cache.delete(key);
        throw err;
      }
    },
    refused(token) {
      const entry = cache.get(key);
      if (entry?.value?.token === token) forget(key, entry.value);
    },
  };
}

/** The scopes (feeds) each cached token is registered as a secret in. */
const scopes = new Map<string, Set<string>>();

/**
 * The token, masked in the outputs of the feed using it when it looks like a token: a `":"` or
 * `Austin` from a token endpoint would mask JSON punctuation or every city of that name.
 */
function remember(token: string, scope: string): string {
  if (!tokenLike(token)) return token;
  let set = scopes.get(token);
  if (!set) scopes.set(token, (set = new Set()));
  if (!set.has(scope)) {
    set.add(scope);
    registerSecret(token, scope);
  }
  return token;
}

function forget(key: string, value: Cached): void {
  cache.delete(key);
  for (const scope of scopes.get(value.token) ?? []) forgetSecret(value.token, scope);
  scopes.delete(value.token);
}

/** Expired tokens leave the cache and the secret registry: neither grows with a worker's uptime. */
function forgetExpired(): void {
  const now = Date.now();
  for (const [key, entry] of cache) if (entry.value && entry.value.expiresAt <= now) forget(key, entry.value);
}

/** Tests: forget every cached token (as a fresh process would). */
export function clearTokenCache(): void {
  for (const [key, entry] of cache) if (entry.value) forget(key, entry.value);
  cache.clear();
}

async function requestToken(auth: OAuth2Auth, credential: string, opts: TokenOptions): Promise<Cached> {
  const place = { file: `${new URL(auth.tokenUrl).origin}${new URL(auth.tokenUrl).pathname}` };
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: auth.clientId,
    client_secret: auth.clientSecret,
  });
  if (auth.scope) body.set('scope', auth.scope);
  for (let attempt = 0; ; attempt++) {
    if (opts.signal?.aborted) throw new AbortedError(`token request to ${place.file}`, opts.signal.reason);
    const got = await tokenAttempt(auth, credential, body.toString(), place, opts);
    if (!(got instanceof FeedReadError)) return got;
    if (!got.retryable || attempt >= opts.retries) throw got;
    await sleep((opts.backoffMs ?? 500) * 2 ** attempt, undefined, { signal: opts.signal }).catch((err) => {
      throw new AbortedError(`token request to ${place.file}`, err);
    });
  }
}

/** One token request: the token, or the failure a retry may help (one it cannot is thrown). */
async function tokenAttempt(
  auth: OAuth2Auth,
  credential: string,
  body: string,
  place: { file: string },
  opts: TokenOptions,
): Promise<Cached | FeedReadError> {
  try {
    opts.onCall?.();
    const response = await boundedRequest({
      method: 'POST',
      url: auth.tokenUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      deadlineMs: opts.timeoutMs,
      maxBytes: MAX_TOKEN_BYTES,
      ...(opts.signal && { signal: opts.signal }),
    });
    if (response.status >= 300 && response.status < 400) {
      // following it would send the client secret wherever the Location points
      response.cancel();
      throw new FeedReadError(
        `the token endpoint answered ${credential} with a redirect (HTTP ${response.status}), which is never followed: it would carry the client secret elsewhere; set feeds[].source.auth.tokenUrl to the final address`,
        place,
        false,
        { status: response.status },
      );
    }
    const raw = await response.bytes();
    if (response.status >= 200 && response.status < 300) return tokenOf(raw.toString('utf8'), credential, place);
    const retryable = isRetryableStatus(response.status);
    // what the endpoint said (OAuth2 error / error_description), decoded and capped, masked
    const said = errorBodyMessage(raw, response.headers.get('content-encoding'));
    return new FeedReadError(
      // (what to check last: a feed's run says it once, under the feed's name: sync/util/auth.ts)
      `the token endpoint refused ${credential}: HTTP ${response.status}${said ? ` (it said: ${maskSecrets(said)})` : ''}${retryable ? '' : `; ${credentialCheck(OAUTH2_KEY)}`}`,
      place,
      retryable,
      {
        status: response.status,
        ...(!retryable && { credentialKey: OAUTH2_KEY }),
      },
    );
  } catch (err) {
    if (err instanceof FeedReadError) throw err;
    if (opts.signal?.aborted) throw new AbortedError(`token request to ${place.file}`, err);
    // a token answer past the cap will be as large next time; a timeout or a dropped connection may not
    const again = !(err instanceof RequestStopped && err.reason === 'too-large');
    return new FeedReadError(`the token request for ${credential} failed: ${causeMessage(err)}`, place, again, {
      cause: err,
    });
  }
}

/** The token of a 2xx answer, and when it is renewed. */
function tokenOf(text: string, credential: string, place: { file: string }): Cached {
  const parsed = TokenAnswer.safeParse(safeJson(text));
  if (!parsed.success)
    throw new FeedReadError(`the token endpoint's answer has no access_token (${credential})`, place, false);
  const token = parsed.data.access_token;
  const lifeMs = (parsed.data.expires_in ?? DEFAULT_LIFETIME_S) * 1000;
  const now = Date.now();
  const renewAt = now + Math.max(MIN_REUSE_MS, lifeMs - Math.min(RENEW_BEFORE_MS, lifeMs / 10));
  return { token, renewAt, expiresAt: Math.max(renewAt, now + lifeMs) };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // (not JSON: tokenOf says the answer has no access_token)
  }
}
