// Where a feed's bytes come from: a local file (relative to the config's folder) or an http(s) URL,
// gunzipped when the file is .gz, the server says application/gzip, or config says gzip: true, always
// within source.maxBytes and source.maxCompressionRatio (a Content-Encoding: gzip body is decoded,
// within the same bounds, by http.ts).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { AbortedError, causeMessage, FeedReadError } from '../errors.js';
import type { FeedSource } from './config-schema.js';
import { boundedGunzip } from './decompress.js';
import { displayUrl, httpGet } from './http.js';
import { sourceBudget } from './source-budget.js';
import type { FeedContext } from './types.js';

export interface OpenedSource {
  /** printable name: the path as configured, or the URL without its query */
  label: string;
  bytes: AsyncIterable<Buffer>;
}

export function openSource(source: FeedSource, ctx: FeedContext): OpenedSource {
  if (source.path) {
    const label = source.path;
    const full = feedPath(ctx, source.path);
    const gzip = source.gzip ?? /\.gz$/i.test(source.path);
    return { label, bytes: fileBytes(full, label, gzip, source, ctx.signal) };
  }
  const url = source.url!;
  const label = displayUrl(url);
  return { label, bytes: urlBytes(url, label, source, ctx) };
}

/** A configured feed path as a file path: relative ones are relative to the config's folder. */
export function feedPath(ctx: Pick<FeedContext, 'baseDir'>, path: string): string {
  return isAbsolute(path) ? path : resolve(ctx.baseDir, path);
}

async function* fileBytes(full: string, label: string, gzip: boolean, source: FeedSource, signal?: AbortSignal): AsyncIterable<Buffer> {
  try {
    await stat(full);
  } catch (err) {
    throw new FeedReadError(`cannot open the feed file (${full}): ${causeMessage(err)}`, { file: label }, false, { cause: err });
  }
  const stream = createReadStream(full, { highWaterMark: 256 * 1024, signal });
  const raw = guard(stream, label, false, stream);
  yield* gzip ? boundedGunzip(raw, source, label, () => stream.destroy()) : raw;
}

async function* urlBytes(url: string, label: string, source: FeedSource, ctx: FeedContext): AsyncIterable<Buffer> {
  const { response, body, cancel } = await httpGet(url, {
    headers: source.headers,
    bearerToken: source.bearerToken,
    timeoutMs: source.timeoutMs,
    retries: source.retries,
    maxBytes: source.maxBytes,
    maxCompressionRatio: source.maxCompressionRatio,
    signal: ctx.signal,
    logger: ctx.logger,
    budget: sourceBudget(source, ctx),
  });
  const type = response.headers.get('content-type') ?? '';
  const gzip = source.gzip ?? (/application\/(x-)?gzip/i.test(type) || /\.gz$/i.test(new URL(url).pathname));
  try {
    yield* gzip ? boundedGunzip(body, source, label, cancel) : body;
  } finally {
    cancel();
  }
}

/** Errors of a byte stream (a corrupt gzip, a read failure) become FeedReadError with the feed's name. */
async function* guard(stream: AsyncIterable<Buffer>, label: string, retryable: boolean, toClose?: { destroy(): void }): AsyncIterable<Buffer> {
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (err) {
    if (err instanceof FeedReadError) throw err;
    if ((err as Error).name === 'AbortError') throw new AbortedError(`reading ${label}`, err);
    throw new FeedReadError(`cannot read the feed: ${causeMessage(err)}`, { file: label }, retryable, { cause: err });
  } finally {
    toClose?.destroy();
  }
}
