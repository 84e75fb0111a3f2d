// One photo download over the bounded transport (net/request.ts): a total deadline (media.timeoutMs,
// body included), a byte cap (media.maxBytes, counted while streaming), the source's budget
// (source.limits: requests before each one, bytes as they come), connections only to public
// addresses (photo-agent.ts: resolved and checked here, connected to as checked; an IP literal
// checked before the request), redirects followed by hand, at most MAX_REDIRECTS, each hop checked
// the same way; the feed's photo credentials only on an https hop to a host they are for
// (feeds/media-headers.ts), every other hop bare; and the body taken only if the whole of it is one
// image (image-check.ts). A photo that cannot be had is a value (PhotoFailure), never a thrown
// error: the listing goes on without it. Only the run's own abort is thrown.
import { AbortedError, causeMessage } from '../errors.js';
import { displayUrl, type RequestBudget } from '../feeds/source/http.js';
import { credentialsFor, type MediaCredentials } from '../feeds/media-headers.js';
import { boundedRequest, RequestStopped, type BoundedResponse } from '../net/request.js';
import { maskSecrets } from '../secrets.js';
import { statusText } from '../net/status-text.js';
import { checkImage, type CheckedImage } from './image-check.js';
import { imageTypeOf, SNIFF_BYTES } from './image-type.js';
import { literalRefusal, refusalIn, type PhotoAgent } from './photo-agent.js';

export interface PhotoDownloadOptions {
  credentials: MediaCredentials;
  /** the feed run's connections (public addresses only, or what media.allowInternal allows) */
  agent: PhotoAgent;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  signal?: AbortSignal;
  /** the source's budget, a fresh hook per download (a hook holds one request's permit) */
  budget?: RequestBudget;
}

export type PhotoDownload = ({ ok: true; bytes: Buffer } & CheckedImage) | PhotoFailure;
export interface PhotoFailure {
  ok: false;
  reason: string;
}

const MAX_REDIRECTS = 5;

export async function downloadPhoto(url: string, opts: PhotoDownloadOptions): Promise<PhotoDownload> {
  const fail = (reason: string): PhotoFailure => ({ ok: false, reason: maskSecrets(reason) });
  let start: URL;
  try {
    start = new URL(url);
  } catch {
    return fail('not a URL');
  }
  try {
    const res = await follow(start, opts);
    if (typeof res === 'string') return fail(res);
    if (res.status < 200 || res.status >= 300) {
      res.cancel();
      return fail(`HTTP ${res.status} ${statusText(res.status)}`.trim());
    }
    return await readImage(res, opts);
  } catch (err) {
    if (opts.signal?.aborted) throw new AbortedError(`GET ${displayUrl(url)}`, err);
    const refused = refusalIn(err);
    if (refused) return fail(refused.message);
    if (err instanceof RequestStopped && err.reason === 'too-large')
      return fail(`larger than media.maxBytes (${opts.maxBytes} bytes)`);
    if (err instanceof RequestStopped && err.reason === 'deadline')
      return fail(`not complete within media.timeoutMs (${opts.timeoutMs} ms)`);
    return fail(causeMessage(err));
  }
}

/** The GET and its redirects; a string is why a hop was refused (before anything was sent to it). */
async function follow(start: URL, opts: PhotoDownloadOptions): Promise<BoundedResponse | string> {
  const maxRedirects = opts.maxRedirects ?? MAX_REDIRECTS;
  let url = start;
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return `${url.protocol} URLs are not downloaded (http and https only)`;
    const literal = literalRefusal(url, opts.agent.allow);
    if (literal) return `refused: ${url.hostname}: ${literal}`;
    await opts.budget?.beforeRequest(opts.signal);
    const res = await boundedRequest({
      method: 'GET',
      url: url.toString(),
      headers: { accept: 'image/*', ...credentialsFor(url, opts.credentials) },
      deadlineMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
      signal: opts.signal,
      dispatcher: opts.agent.agent,
    });
    await opts.budget?.onResponse(res.status, res.headers);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || res.status === 304 || !location) return res;
    res.cancel();
    if (hop >= maxRedirects) return `more than ${maxRedirects} redirects`;
    try {
      url = new URL(location, url);
    } catch {
      return `HTTP ${res.status} redirect to something that is not a URL`;
    }
  }
}

/** The whole body (within maxBytes), if it is one whole image. */
async function readImage(res: BoundedResponse, opts: PhotoDownloadOptions): Promise<PhotoDownload> {
  const chunks: Buffer[] = [];
  let size = 0;
  let sniffed = false;
  for await (const chunk of res.body) {
    opts.budget?.onBytes?.(chunk.length);
    chunks.push(chunk);
    size += chunk.length;
    if (!sniffed && size >= SNIFF_BYTES) {
      sniffed = true;
      const head = Buffer.concat(chunks);
      if (!imageTypeOf(head)) return notAnImage(res, head);
    }
  }
  const bytes = Buffer.concat(chunks, size);
  const checked = checkImage(bytes);
  if (!checked.ok) return notAnImage(res, bytes, checked.reason);
  if (opts.signal?.aborted) throw new AbortedError('photo download', opts.signal.reason);
  return { ok: true, bytes, ...checked.image };
}

function notAnImage(res: BoundedResponse, head: Buffer, why?: string): PhotoFailure {
  res.cancel();
  if (why) return { ok: false, reason: `not an image: ${why}` };
  const declared = res.headers.get('content-type');
  const shown = head.length === 0 ? 'an empty body' : 'its first bytes are no image type';
  return {
    ok: false,
    reason: `not an image (JPEG, PNG, GIF, WebP or AVIF): ${shown}${declared ? `; the server called it ${maskSecrets(declared)}` : ''}`,
  };
}
