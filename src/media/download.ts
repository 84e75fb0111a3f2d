// One photo download over the bounded transport (net/request.ts): a total deadline (media.timeoutMs,
// body included), a byte cap (media.maxBytes, counted while streaming), the source's budget
// (source.limits: requests before each one, bytes as they come), redirects followed within the
// photo's own origin only (the headers therefore never reach another origin), and the body taken
// only if its first bytes are an image. A photo that cannot be had is a value (PhotoFailure), never
// a thrown error: the listing goes on without it. Only the run's own abort is thrown.
import { STATUS_CODES } from 'node:http';
import { AbortedError, causeMessage } from '../errors.js';
import { displayUrl, type RequestBudget } from '../feeds/source/http.js';
import { boundedRequest, RequestStopped, type BoundedResponse } from '../net/request.js';
import { maskSecrets } from '../secrets.js';
import { imageTypeOf, SNIFF_BYTES, type ImageType } from './image-type.js';

export interface PhotoDownloadOptions {
  /** sent to the photo's origin (and to a redirect within it), nowhere else */
  headers: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  signal?: AbortSignal;
  /** the source's budget, a fresh hook per download (a hook holds one request's permit) */
  budget?: RequestBudget;
}

export type PhotoDownload = { ok: true; bytes: Buffer; type: ImageType } | PhotoFailure;
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
  if (start.protocol !== 'http:' && start.protocol !== 'https:') return fail(`${start.protocol} URLs are not downloaded (http and https only)`);
  try {
    const res = await follow(start, opts);
    if (typeof res === 'string') return fail(res);
    if (res.status < 200 || res.status >= 300) {
      res.cancel();
      return fail(`HTTP ${res.status} ${STATUS_CODES[res.status] ?? ''}`.trim());
    }
    return await readImage(res, opts);
  } catch (err) {
    if (opts.signal?.aborted) throw new AbortedError(`GET ${displayUrl(url)}`, err);
    if (err instanceof RequestStopped && err.reason === 'too-large') return fail(`larger than media.maxBytes (${opts.maxBytes} bytes)`);
    if (err instanceof RequestStopped && err.reason === 'deadline') return fail(`not complete within media.timeoutMs (${opts.timeoutMs} ms)`);
    return fail(causeMessage(err));
  }
}

/** The GET and its redirects; a string is why a redirect was refused. */
async function follow(start: URL, opts: PhotoDownloadOptions): Promise<BoundedResponse | string> {
  const maxRedirects = opts.maxRedirects ?? MAX_REDIRECTS;
  let url = start;
  for (let hop = 0; ; hop++) {
    await opts.budget?.beforeRequest(opts.signal);
    const res = await boundedRequest({
      method: 'GET',
      url: url.toString(),
      headers: { accept: 'image/*', ...opts.headers },
      deadlineMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
      signal: opts.signal,
    });
    await opts.budget?.onResponse(res.status, res.headers);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || res.status === 304 || !location) return res;
    res.cancel();
    const next = new URL(location, url);
    if (next.origin !== start.origin)
      return `HTTP ${res.status} redirect to another origin (${displayUrl(next.toString())}) refused: photos are followed within their own host only`;
    if (hop >= maxRedirects) return `more than ${maxRedirects} redirects`;
    url = next;
  }
}

/** The whole body (within maxBytes), if its first bytes are an image. */
async function readImage(res: BoundedResponse, opts: PhotoDownloadOptions): Promise<PhotoDownload> {
  const chunks: Buffer[] = [];
  let size = 0;
  let type: ImageType | undefined;
  for await (const chunk of res.body) {
    opts.budget?.onBytes?.(chunk.length);
    chunks.push(chunk);
    size += chunk.length;
    if (type === undefined && size >= SNIFF_BYTES) {
      type = imageTypeOf(Buffer.concat(chunks));
      if (!type) return notAnImage(res, Buffer.concat(chunks));
    }
  }
  const bytes = Buffer.concat(chunks, size);
  type ??= imageTypeOf(bytes);
  if (!type) return notAnImage(res, bytes);
  if (opts.signal?.aborted) throw new AbortedError('photo download', opts.signal.reason);
  return { ok: true, bytes, type };
}

function notAnImage(res: BoundedResponse, head: Buffer): PhotoFailure {
  res.cancel();
  const declared = res.headers.get('content-type');
  const shown = head.length === 0 ? 'an empty body' : `first bytes ${head.subarray(0, 8).toString('hex')}`;
  return { ok: false, reason: `not an image (JPEG, PNG, GIF, WebP or AVIF): ${shown}${declared ? `, Content-Type ${declared}` : ''}` };
}
