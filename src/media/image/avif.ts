// An AVIF walked as its ISO-BMFF boxes (ISO/IEC 14496-12, HEIF 23008-12): top-level boxes running
// exactly to the end of the body (a size-0 box: to the end), ftyp first, a meta box and an mdat.
// Dimensions from the image spatial extents property (meta → iprp → ipco → ispe).
import { NotWhole, Reader, type Walked } from './walk.js';

interface Box {
  type: string;
  /** where its payload starts and where the box ends */
  body: number;
  end: number;
}

export function walkAvif(b: Buffer): Walked {
  const r = new Reader(b);
  const top = boxes(r, 0, b.length);
  if (top[0]?.type !== 'ftyp') throw new NotWhole('the first box is not ftyp');
  const meta = top.find((x) => x.type === 'meta');
  if (!meta || !top.some((x) => x.type === 'mdat')) throw new NotWhole('no meta or no mdat box');
  // meta is a full box: 4 bytes of version and flags before its children
  const iprp = boxes(r, meta.body + 4, meta.end).find((x) => x.type === 'iprp');
  const ipco = iprp && boxes(r, iprp.body, iprp.end).find((x) => x.type === 'ipco');
  const ispe = ipco && boxes(r, ipco.body, ipco.end).find((x) => x.type === 'ispe');
  if (!ispe) throw new NotWhole('no image size (ispe) property');
  return { end: b.length, width: r.u32be(ispe.body + 4, 'ispe'), height: r.u32be(ispe.body + 8, 'ispe') };
}

/** The boxes from `from` to exactly `to`; at most a few thousand. */
function boxes(r: Reader, from: number, to: number): Box[] {
  const out: Box[] = [];
  let at = from;
  while (at < to) {
    if (out.length >= 4096) throw new NotWhole('more than 4096 boxes in one level');
    let size = r.u32be(at, 'a box size');
    const type = r.ascii(at + 4, 4, 'a box type');
    let body = at + 8;
    if (size === 1) {
      const high = r.u32be(at + 8, 'a box size');
      size = high * 2 ** 32 + r.u32be(at + 12, 'a box size');
      body += 8;
    } else if (size === 0) size = to - at;
    if (size < body - at || at + size > to) throw new NotWhole(`the ${type} box overruns its container`);
    out.push({ type, body, end: at + size });
    at += size;
  }
  return out;
}
