// A JPEG walked marker by marker from SOI to EOI (ITU T.81 annex B): every segment's length inside
// the body, a frame header (SOFn) before the first scan, each scan's entropy-coded data run through
// to the next marker, EOI at the end. Dimensions from the frame header. A JPEG right after EOI (the
// Multi-Picture Format's further images, which phones write) is walked the same way, a few deep.
import { NotWhole, Reader, type Walked } from './walk.js';

const MAX_APPENDED = 4;

export function walkJpeg(b: Buffer, from = 0, depth = 0): Walked {
  const r = new Reader(b);
  if (r.u16be(from, 'SOI') !== 0xffd8) throw new NotWhole('no JPEG start marker');
  let at = from + 2;
  let frame: { width: number; height: number } | undefined;
  for (;;) {
    const marker = readMarker(r, at);
    at += marker.size;
    if (marker.code === 0xd9) break; // EOI
    if ((marker.code >= 0xd0 && marker.code <= 0xd7) || marker.code === 0x01) continue; // RSTn, TEM: no length
    const length = r.u16be(at, 'a segment length');
    if (length < 2) throw new NotWhole(`a segment of length ${length}`);
    r.need(at, length, 'a segment');
    if (isFrameHeader(marker.code))
      frame = { height: r.u16be(at + 3, 'the frame header'), width: r.u16be(at + 5, 'the frame header') };
    at += length;
    if (marker.code === 0xda) {
      if (!frame) throw new NotWhole('a scan before the frame header');
      at = scanEnd(b, at);
    }
  }
  if (!frame) throw new NotWhole('no frame header (SOFn)');
  if (depth < MAX_APPENDED && startsJpeg(b, at)) at = walkJpeg(b, at, depth + 1).end;
  return { end: at, ...frame };
}

/** The marker at `at` (its fill bytes counted in `size`); a marker no segment may carry is an error. */
function readMarker(r: Reader, at: number): { code: number; size: number } {
  if (r.u8(at, 'a marker') !== 0xff) throw new NotWhole(`no marker at byte ${at}`);
  let last = at;
  while (r.u8(last + 1, 'a marker') === 0xff) last++; // fill bytes
  const code = r.u8(last + 1, 'a marker');
  if (code === 0x00 || code === 0xd8) throw new NotWhole(`a stray marker 0x${code.toString(16)} at byte ${last}`);
  return { code, size: last + 2 - at };
}

/** Another JPEG's SOI and first marker right at `at` (a Multi-Picture Format image after EOI). */
const startsJpeg = (b: Buffer, at: number) =>
  at + 3 <= b.length && b[at] === 0xff && b[at + 1] === 0xd8 && b[at + 2] === 0xff;

/** SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC). */
const isFrameHeader = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/** The first marker after entropy-coded data (0xFF followed by neither 0x00 nor a restart marker). */
function scanEnd(b: Buffer, from: number): number {
  for (let at = b.indexOf(0xff, from); at !== -1 && at + 1 < b.length; at = b.indexOf(0xff, at + 1)) {
    const next = b[at + 1]!;
    if (next === 0x00 || next === 0xff || (next >= 0xd0 && next <= 0xd7)) continue;
    return at;
  }
  throw new NotWhole('a scan that never ends (no EOI)');
}
