// Whether a photo's bytes are, all of them, one image of the type its first bytes name (image-type.ts):
// the format's structure walked from its start marker to its end marker (image/: JPEG segments to
// EOI, PNG chunks with their CRCs to IEND, GIF blocks to the trailer, WebP's RIFF chunks, AVIF's
// boxes), its dimensions read from the format. A body with more after the image than a little
// padding (TRAILING_PADDING bytes of 0x00, 0xFF or white space) is not stored: a GIF header
// followed by an HTML page is not a GIF. The Content-Type stored is the type checked here.
import { walkAvif } from './image/avif.js';
import { walkGif } from './image/gif.js';
import { walkJpeg } from './image/jpeg.js';
import { walkPng } from './image/png.js';
import { NotWhole, type Walked } from './image/walk.js';
import { walkWebp } from './image/webp.js';
import { imageTypeOf, type ImageType } from './image-type.js';

export interface CheckedImage {
  type: ImageType;
  width: number;
  height: number;
}

/** Bytes after an image's end marker that are tolerated, if they are padding only. */
export const TRAILING_PADDING = 4096;
/** Most pixels of a photo (2^28: 16384 × 16384). */
export const MAX_PIXELS = 2 ** 28;

const WALKS: Record<ImageType['ext'], (b: Buffer) => Walked> = {
  jpg: walkJpeg,
  png: walkPng,
  gif: walkGif,
  webp: walkWebp,
  avif: walkAvif,
};

export function checkImage(bytes: Buffer): { ok: true; image: CheckedImage } | { ok: false; reason: string } {
  const type = imageTypeOf(bytes);
  if (!type)
    return {
      ok: false,
      reason: bytes.length === 0 ? 'an empty body' : 'its first bytes are no image type (JPEG, PNG, GIF, WebP or AVIF)',
    };
  const name = type.contentType.slice('image/'.length).toUpperCase();
  let walked: Walked;
  try {
    walked = WALKS[type.ext](bytes);
  } catch (err) {
    if (err instanceof NotWhole)
      return { ok: false, reason: `starts as ${name} but is not a whole one: ${err.message}` };
    throw err;
  }
  const trailing = bytes.length - walked.end;
  if (trailing > TRAILING_PADDING || !isPadding(bytes, walked.end))
    return { ok: false, reason: `a ${name} followed by ${trailing} bytes that are not part of it` };
  const { width, height } = walked;
  if (width < 1 || height < 1 || width * height > MAX_PIXELS)
    return { ok: false, reason: `a ${name} of ${width}×${height} pixels (1 to ${MAX_PIXELS} pixels stored)` };
  return { ok: true, image: { type, width, height } };
}

function isPadding(b: Buffer, from: number): boolean {
  for (let i = from; i < b.length; i++) {
    const c = b[i]!;
    if (c !== 0x00 && c !== 0xff && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}
