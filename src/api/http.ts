// One HTTP attempt of the API client: POST a JSON body over the client's keep-alive pools, bounded by
// a total deadline (timeoutMs, body included) and a byte cap (maxResponseBytes), and turn transport
// failures into the error family (AbortedError, TimeoutError, NetworkError, ResponseFormatError).
// A redirect is an error: following it would send the secret key and the listings to another place.
import { AbortedError, ApiError, NetworkError, ResponseFormatError, TimeoutError } from '../errors.js';
import {
  boundedRequest,
  RequestStopped,
  type BoundedResponse,
  type LazyAgent,
  type WholePool,
} from '../net/request.js';
import { maskSecrets, maskUrl } from '../secrets.js';

export interface ApiTransport {
  /** undici's pool: the streamed answer (made, and undici loaded, at the first one) */
  dispatcher: LazyAgent;
  /** node:http's pool: every other call, read whole (net/request.ts wholePool says why) */
  pool: WholePool;
  timeoutMs: number;
  maxResponseBytes: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export async function postJson(
  endpoint: string,
  url: string | URL,
  headers: Record<string, string>,
  body: unknown,
  transport: ApiTransport,
  signal: AbortSignal | undefined,
  /** the caller reads the body whole, never as a stream (BoundedRequest.whole) */
  whole = false,
): Promise<BoundedResponse> {
  const res = await boundedRequest({
    method: 'POST',
    url,
    headers,
    body: JSON.stringify(body),
    deadlineMs: transport.timeoutMs,
    maxBytes: transport.maxResponseBytes,
    signal,
    dispatcher: transport.dispatcher,
    pool: transport.pool,
    whole,
  });
  if (res.status >= 300 && res.status < 400) {
    res.cancel();
    const location = res.headers.get('location');
    // (a Location that is not a URL is still a redirect: said so, and not retried as a network error would be)
    const to = location ? URL.parse(location, String(url)) : null;
    const where = to ? ` to ${maskUrl(to.toString())}` : location ? ' to a Location that is not a URL' : '';
    throw new ApiError(
      endpoint,
      res.status,
      undefined,
      `the service answered with a redirect${where}, which is never followed (it would carry the key and the body elsewhere); set api.baseUrl to the final address`,
      { retryable: false },
    );
  }
  return res;
}

/** The error for a failure while sending or reading: the caller's abort wins, then the bounds. */
export function transportError(
  endpoint: string,
  err: unknown,
  caller: AbortSignal | undefined,
  transport: ApiTransport,
  httpStatus = 0,
): Error {
  if (caller?.aborted) return new AbortedError(endpoint, caller.reason);
  if (err instanceof RequestStopped) {
    if (err.reason === 'deadline') return new TimeoutError(endpoint, transport.timeoutMs);
    if (err.reason === 'aborted') return new AbortedError(endpoint, err.cause);
    return new ResponseFormatError(
      endpoint,
      httpStatus,
      '',
      `the body is larger than api.maxResponseBytes (${transport.maxResponseBytes} bytes); reading stopped there`,
    );
  }
  const error = new NetworkError(endpoint, err);
  error.message = maskSecrets(error.message);
  return error;
}
