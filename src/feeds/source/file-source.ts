// A feed's bytes from a local file (relative to the config's folder), gunzipped when asked, within
// source.maxBytes and source.maxCompressionRatio; its read errors as FeedReadError. Apart from
// source.ts so that a reader on another thread (sync/read/feed-worker.ts) loads no HTTP client.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { AbortedError, causeMessage, FeedReadError } from '../../errors.js';
import type { FeedSource } from '../config-schema.js';
import { isSystemError, systemProblem } from '../../system-error.js';
import { boundedGunzip } from './decompress.js';

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** A configured feed path as a file path: relative ones are relative to the config's folder. */
export function feedPath(ctx: { baseDir: string }, path: string): string {
  return isAbsolute(path) ? path : resolve(ctx.baseDir, path);
}

/** The bytes of the file `source.path` names (a .gz name, or gzip: true, gunzipped). */
export function openFileSource(
  source: FeedSource & { path: string },
  ctx: { baseDir: string; signal?: AbortSignal },
): { label: string; bytes: AsyncIterable<Buffer> } {
  const label = source.path;
  const gzip = source.gzip ?? /\.gz$/i.test(source.path);
  return { label, bytes: fileBytes(feedPath(ctx, source.path), label, gzip, source, ctx.signal) };
}

async function* fileBytes(
  full: string,
  label: string,
  gzip: boolean,
  source: FeedSource,
  signal?: AbortSignal,
): AsyncIterable<Buffer> {
  const unusable = (problem: string, remedy: string, cause?: unknown) =>
    new FeedReadError(`the feed file ${full} ${problem}: ${remedy}`, { file: label }, false, { cause });
  let isFolder: boolean;
  try {
    isFolder = (await stat(full)).isDirectory();
  } catch (err) {
    if (isSystemError(err) && err.code === 'ENOENT')
      throw unusable(
        'does not exist (ENOENT)',
        "check feeds[].source.path (a relative path is relative to the config file's folder), or put the file there",
        err,
      );
    const why = isSystemError(err) ? systemProblem(err) : undefined;
    if (why) throw unusable(why.problem, lowerFirst(why.remedy), err);
    throw new FeedReadError(`cannot open the feed file (${full}): ${causeMessage(err)}`, { file: label }, false, {
      cause: err,
    });
  }
  // (a folder passes stat and fails at the first read, as EISDIR "illegal operation on a directory")
  if (isFolder)
    throw unusable(
      'is a folder where a file was expected (EISDIR)',
      'point feeds[].source.path at the feed file inside it',
    );
  const stream = createReadStream(full, { highWaterMark: 256 * 1024, signal });
  const raw = guard(stream, label, false, stream);
  yield* gzip ? boundedGunzip(raw, source, label, () => stream.destroy()) : raw;
}

/** Errors of a byte stream (a corrupt gzip, a read failure) become FeedReadError with the feed's name. */
async function* guard(
  stream: AsyncIterable<Buffer>,
  label: string,
  retryable: boolean,
  toClose?: { destroy(): void },
): AsyncIterable<Buffer> {
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
