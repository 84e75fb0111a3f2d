// A WebP walked as its RIFF container (Google's WebP container spec): the RIFF size equal to the
// body, chunks (padded to even) running exactly to it, the first one VP8, VP8L or VP8X, whose header
// gives the dimensions.
import { NotWhole, Reader, type Walked } from './walk.js';

export function walkWebp(b: Buffer): Walked {
  const r = new Reader(b);
  const end = 8 + r.u32le(4, 'the RIFF header');
  r.need(0, end, 'the RIFF body');
  let at = 12;
  let size: { width: number; height: number } | undefined;
  while (at < end) {
    const type = r.ascii(at, 4, 'a chunk type');
    const length = r.u32le(at + 4, 'a chunk length');
    r.need(at + 8, length, `the ${type} chunk`);
    if (at === 12) size = dimensions(r, type, at + 8);
    at += 8 + length + (length & 1);
  }
  if (at !== end) throw new NotWhole('its chunks overrun the RIFF size');
  if (!size) throw new NotWhole('no chunk');
  return { end, ...size };
}

function dimensions(r: Reader, type: string, data: number): { width: number; height: number } {
  if (type === 'VP8 ') {
    if (r.u24le(data + 3, 'the VP8 frame') !== 0x2a019d) throw new NotWhole('no VP8 start code');
    return { width: r.u16le(data + 6, 'the VP8 frame') & 0x3fff, height: r.u16le(data + 8, 'the VP8 frame') & 0x3fff };
  }
  if (type === 'VP8L') {
    if (r.u8(data, 'the VP8L header') !== 0x2f) throw new NotWhole('no VP8L signature');
    const bits = r.u32le(data + 1, 'the VP8L header');
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (type === 'VP8X')
    return { width: r.u24le(data + 4, 'the VP8X header') + 1, height: r.u24le(data + 7, 'the VP8X header') + 1 };
  throw new NotWhole(`the first chunk is ${type.trim()}, not VP8, VP8L or VP8X`);
}
