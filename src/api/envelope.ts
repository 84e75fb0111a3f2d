// The envelope check of every response (spec, Errors): HTTP status first, then Success and Code.
// A body that is not the JSON envelope (a proxy's HTML error page) is a ResponseFormatError that
// shows where it went wrong and how the body starts.
import type { z } from 'zod';
import { ApiError, RateLimitedError, ResponseFormatError } from '../errors.js';
import { maskSecrets as redactSecrets } from '../secrets.js';
import { parseRetryAfter } from './retry.js';
import { Envelope, quickListData, type ListData } from './schemas.js';

const SNIPPET_CHARS = 120;

export function snippet(text: string): string {
  return redactSecrets(text.slice(0, SNIPPET_CHARS).replace(/\s+/g, ' ').trim());
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** A response's status and text, its headers read from it only when asked (a success reads none; BoundedResponse makes them then). */
export function rawResponse(res: { readonly status: number; readonly headers: Headers }, text: string): RawResponse {
  return {
    status: res.status,
    text,
    get headers() {
      return res.headers;
    },
  };
}

/** Checks the envelope and parses Data with `data` (`quick`: a hand-written check that agrees with it, tried first); throws the matching error otherwise. */
export function readEnvelope<T>(
  endpoint: string,
  res: RawResponse,
  data: z.ZodType<T>,
  quick?: (data: unknown) => T | undefined,
): T {
  const envelope = parseEnvelope(endpoint, res);
  const fast = quick?.(envelope.Data);
  if (fast !== undefined) return fast;
  const parsed = data.safeParse(envelope.Data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ['Data', ...(issue?.path ?? []).map(String)].join('.');
    throw new ResponseFormatError(
      endpoint,
      res.status,
      snippet(res.text),
      `unexpected ${where}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** Parses the envelope and throws ApiError / RateLimitedError when it reports a failure. */
export function parseEnvelope(endpoint: string, res: RawResponse): Envelope {
  let json: unknown;
  try {
    json = JSON.parse(res.text);
  } catch {
    const type = res.headers.get('content-type') ?? 'no content-type';
    throw new ResponseFormatError(endpoint, res.status, snippet(res.text), `the body is not JSON (${type})`);
  }
  const env = quickEnvelope(json) ?? envelopeOf(endpoint, res, json);
  const ok = res.status >= 200 && res.status < 300 && env.Success && env.Code === 200;
  if (ok) return env;
  const message = redactSecrets(env.Message);
  if (res.status === 429 || env.Code === 429) {
    throw new RateLimitedError(endpoint, res.status, parseRetryAfter(res.headers.get('retry-after')), message);
  }
  throw new ApiError(endpoint, res.status, env.Code, message);
}

/** The envelope by its schema (zod), or the ResponseFormatError that names the fields that are not. */
function envelopeOf(endpoint: string, res: RawResponse, json: unknown): Envelope {
  const parsed = Envelope.safeParse(json);
  if (parsed.success) return parsed.data;
  const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(body)'))].join(', ');
  throw new ResponseFormatError(
    endpoint,
    res.status,
    snippet(res.text),
    `the body is not the service envelope (${fields})`,
  );
}

/**
 * What Envelope.parse(json) gives, when the JSON plainly is an envelope (an object with Data and
 * the other members of their types), without zod (every response is one); anything else is
 * undefined, and zod decides. test/api/quick-list-page.test.ts holds it to the schema.
 */
export function quickEnvelope(json: unknown): Envelope | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json) || !('Data' in json)) return undefined;
  const env = json as Record<string, unknown>;
  const { Version, Success, Code, Message } = env;
  if (typeof Version !== 'string' || typeof Success !== 'boolean' || !Number.isSafeInteger(Code)) return undefined;
  if (Message !== null && typeof Message !== 'string') return undefined;
  return { Data: env.Data, Version, Success, Code: Code as number, Message: Message ?? '' };
}

/**
 * What readEnvelope(endpoint, res, ListData, quickListData) returns, when the response plainly is a
 * successful list page: a 2xx status, JSON, an envelope of the right types with Success true and
 * Code 200, and Data that quickListData takes. Anything else is undefined (never an error): the
 * caller then reads it with readEnvelope, which names the problem. Lets a list page be checked away
 * from the client (a worker thread); test/api/quick-list-page.test.ts holds the two to one verdict.
 */
export function quickListPage(status: number, text: string): ListData | undefined {
  if (status < 200 || status >= 300) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined; // (not JSON: no quick page; parseEnvelope says what is wrong with it)
  }
  const env = quickEnvelope(json);
  if (env?.Success !== true || env.Code !== 200) return undefined;
  return quickListData(env.Data);
}
