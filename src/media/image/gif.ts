// A GIF walked block by block (GIF89a spec): the logical screen and its colour table, then
// extensions and images, each as sub-blocks to their terminator, to the trailer (0x3B). Dimensions
// from the logical screen descriptor; at least one image.
import { NotWhole, Reader, type Walked } from './walk.js';

export function walkGif(b: Buffer): Walked {
  const r = new Reader(b);
  const width = r.u16le(6, 'the screen descriptor');
  const height = r.u16le(8, 'the screen descriptor');
  let at = 13 + colorTable(r.u8(10, 'the screen descriptor'));
  let images = 0;
  for (;;) {
    const block = r.u8(at, 'a block');
    if (block === 0x3b) {
      at++;
      break;
    }
    if (block === 0x21) at = subBlocks(r, at + 2);
    else if (block === 0x2c) {
      at += 10 + colorTable(r.u8(at + 9, 'an image descriptor'));
      r.u8(at, 'the LZW code size');
      at = subBlocks(r, at + 1);
      images++;
    } else throw new NotWhole(`an unknown block 0x${block.toString(16)} at byte ${at}`);
  }
  if (images === 0) throw new NotWhole('no image in it');
  return { end: at, width, height };
}

const colorTable = (packed: number) => (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0);

/** Sub-blocks (a length byte, then that many bytes) to the zero-length terminator; where they end. */
function subBlocks(r: Reader, from: number): number {
  let at = from;
  for (let n = r.u8(at, 'a sub-block'); n !== 0; n = r.u8(at, 'a sub-block')) at += n + 1;
  return at + 1;
}
