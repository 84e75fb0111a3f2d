// A PNG walked chunk by chunk (PNG spec, ISO/IEC 15948): the signature, IHDR first, each chunk's
// length inside the body and its CRC right, at least one IDAT, IEND at the end. Dimensions from IHDR.
import { NotWhole, Reader, type Walked } from './walk.js';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(b: Buffer, from: number, to: number): number {
  let c = 0xffffffff;
  for (let i = from; i < to; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function walkPng(b: Buffer): Walked {
  const r = new Reader(b);
  let at = 8;
  let size: { width: number; height: number } | undefined;
  let idat = false;
  for (;;) {
    const length = r.u32be(at, 'a chunk length');
    const type = r.ascii(at + 4, 4, 'a chunk type');
    r.need(at + 8, length + 4, `the ${type} chunk`);
    if (crc32(b, at + 4, at + 8 + length) !== r.u32be(at + 8 + length, 'a CRC'))
      throw new NotWhole(`the ${type} chunk's CRC is wrong`);
    if (at === 8 && type !== 'IHDR') throw new NotWhole('the first chunk is not IHDR');
    if (type === 'IHDR') size = { width: r.u32be(at + 8, 'IHDR'), height: r.u32be(at + 12, 'IHDR') };
    if (type === 'IDAT') idat = true;
    at += 12 + length;
    if (type === 'IEND') break;
  }
  if (!size || !idat) throw new NotWhole('no image data (IDAT)');
  return { end: at, ...size };
}
