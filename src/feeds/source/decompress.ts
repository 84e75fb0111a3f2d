// Gunzip with two bounds, so a small file cannot turn into gigabytes: the bytes it may expand to
// (maxBytes) and how many times larger than its compressed input it may grow (maxCompressionRatio,
// checked once past a floor, since tiny inputs can have large ratios honestly). A 10 MB gzip of
// 10 GiB of zeros ends after a few MB with a FeedReadError saying which bound it hit.
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AbortedError, causeMessage, FeedReadError } from '../../errors.js';

export interface ExpansionLimits {
  /** most bytes the feed may have, after decompression */
  maxBytes?: number;
  /** most the decompressed size may be, as a multiple of the compressed bytes read */
  maxCompressionRatio?: number;
}

const EXPANSION_DEFAULTS = { maxBytes: 4 * 1024 ** 3, maxCompressionRatio: 200 } as const;
/** the ratio is judged only past this much output: a 1 KB gzip of 300 KB is no bomb */
const RATIO_FLOOR_BYTES = 16 * 1024 * 1024;

export async function* boundedGunzip(
  input: AsyncIterable<Buffer>,
  limits: ExpansionLimits,
  label: string,
  onStop?: () => void,
): AsyncIterable<Buffer> {
  const maxBytes = limits.maxBytes ?? EXPANSION_DEFAULTS.maxBytes;
  const maxRatio = limits.maxCompressionRatio ?? EXPANSION_DEFAULTS.maxCompressionRatio;
  let compressed = 0;
  let expanded = 0;
  const counted = (async function* () {
    for await (const chunk of input) {
      compressed += chunk.length;
      yield chunk;
    }
  })();
  // pipeline: an input error reaches the consumer through the gunzip, and a consumer that stops
  // early destroys the chain down to the source (which then closes its connection or file)
  const gunzip = pipeline(Readable.from(counted), createGunzip(), () => {});
  let finished = false;
  try {
    for await (const chunk of gunzip) {
      expanded += (chunk as Buffer).length;
      if (expanded > maxBytes) {
        throw new FeedReadError(
          `the feed expands past source.maxBytes (${maxBytes} bytes) when gunzipped; reading stopped there`,
          { file: label },
          false,
        );
      }
      if (expanded > RATIO_FLOOR_BYTES && expanded > maxRatio * compressed) {
        throw new FeedReadError(
          `the gzip data expands more than ${maxRatio}× (${expanded} bytes from ${compressed}): refused as a decompression bomb; ` +
            'raise source.maxCompressionRatio if the feed is genuine',
          { file: label },
          false,
        );
      }
      yield chunk as Buffer;
    }
    finished = true;
  } catch (err) {
    if (err instanceof FeedReadError || err instanceof AbortedError) throw err;
    if ((err as Error).name === 'AbortError') throw new AbortedError(`reading ${label}`, err);
    throw new FeedReadError(`cannot read the feed (gzip): ${causeMessage(err)}`, { file: label }, false, {
      cause: err,
    });
  } finally {
    if (!finished) {
      gunzip.destroy();
      onStop?.();
    }
  }
}
