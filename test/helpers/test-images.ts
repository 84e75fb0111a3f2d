// Small, structurally whole images of each type the media mirror stores (JPEG, PNG, GIF, WebP,
// AVIF), made byte by byte from the formats' specs (ITU T.81, PNG/ISO 15948, GIF89a, the WebP RIFF
// container, ISO-BMFF/HEIF), so that src/media/image-check.ts finds every one whole. `tag` makes an
// image's bytes its own; `size` pads it (inside the format: a comment, a text chunk, entropy data,
// an mdat) to about that many bytes.
import { deflateSync } from 'node:zlib';

export type ImageKind = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif';

export function testImage(
  kind: ImageKind,
  tag: string,
  size = 300,
  dims: { width: number; height: number } = { width: 2, height: 3 },
): Buffer {
  return MAKERS[kind](tag, size, dims);
}

type Maker = (tag: string, size: number, d: { width: number; height: number }) => Buffer;

const u16be = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const u16le = (n: number) => Buffer.from([n & 0xff, n >> 8]);
const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
/** filler of the tag's letters (never 0xFF: safe inside JPEG entropy data) */
const fill = (tag: string, n: number) => Buffer.alloc(Math.max(1, n), `${tag}|`);

const jpeg: Maker = (tag, size, d) => {
  const sof = Buffer.concat([
    Buffer.from([0xff, 0xc0]),
    u16be(11),
    Buffer.from([8]),
    u16be(d.height),
    u16be(d.width),
    Buffer.from([1, 1, 0x11, 0]),
  ]);
  const sos = Buffer.from([0xff, 0xda, 0, 8, 1, 1, 0, 0, 0x3f, 0]);
  const head = Buffer.concat([Buffer.from([0xff, 0xd8]), sof, sos]);
  return Buffer.concat([head, fill(tag, size - head.length - 2), Buffer.from([0xff, 0xd9])]);
};

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(b: Buffer): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
const chunk = (type: string, data: Buffer) => {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32be(data.length), typed, u32be(crc32(typed))]);
};

const png: Maker = (tag, size, d) => {
  const ihdr = chunk('IHDR', Buffer.concat([u32be(d.width), u32be(d.height), Buffer.from([8, 0, 0, 0, 0])]));
  const rows = Buffer.alloc((d.width + 1) * d.height);
  const idat = chunk('IDAT', deflateSync(rows));
  const fixed = 8 + ihdr.length + idat.length + 12 + 12 + 'Comment\0'.length;
  const text = chunk('tEXt', Buffer.concat([Buffer.from('Comment\0', 'latin1'), fill(tag, size - fixed)]));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    ihdr,
    text,
    idat,
    chunk('IEND', Buffer.alloc(0)),
  ]);
};

/** data as GIF sub-blocks, with the terminator */
function subBlocks(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < data.length; at += 255) {
    const part = data.subarray(at, at + 255);
    parts.push(Buffer.from([part.length]), part);
  }
  return Buffer.concat([...parts, Buffer.from([0])]);
}

const gif: Maker = (tag, size, d) => {
  const screen = Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    u16le(d.width),
    u16le(d.height),
    Buffer.from([0, 0, 0]),
  ]);
  const comment = Buffer.concat([Buffer.from([0x21, 0xfe]), subBlocks(fill(tag, size - 40))]);
  const image = Buffer.concat([
    Buffer.from([0x2c]),
    u16le(0),
    u16le(0),
    u16le(d.width),
    u16le(d.height),
    Buffer.from([0, 2]),
    subBlocks(Buffer.from([0x4c, 0x01])),
  ]);
  return Buffer.concat([screen, comment, image, Buffer.from([0x3b])]);
};

const riffChunk = (type: string, data: Buffer) =>
  Buffer.concat([
    Buffer.from(type, 'latin1'),
    u32le(data.length),
    data,
    data.length & 1 ? Buffer.from([0]) : Buffer.alloc(0),
  ]);

const webp: Maker = (tag, size, d) => {
  const bits = ((d.width - 1) & 0x3fff) | (((d.height - 1) & 0x3fff) << 14);
  const vp8l = riffChunk('VP8L', Buffer.concat([Buffer.from([0x2f]), u32le(bits >>> 0), Buffer.from([0, 0, 0])]));
  const exif = riffChunk('EXIF', fill(tag, size - 20 - vp8l.length - 8));
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), vp8l, exif]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length), body]);
};

const box = (type: string, ...data: Buffer[]) => {
  const body = Buffer.concat(data);
  return Buffer.concat([u32be(8 + body.length), Buffer.from(type, 'latin1'), body]);
};

const avif: Maker = (tag, size, d) => {
  const ftyp = box('ftyp', Buffer.from('avif\0\0\0\0avifmif1miaf', 'latin1'));
  const ispe = box('ispe', Buffer.alloc(4), u32be(d.width), u32be(d.height));
  const meta = box(
    'meta',
    Buffer.alloc(4),
    box('hdlr', Buffer.alloc(4), Buffer.from('\0\0\0\0pict\0\0\0\0\0\0\0\0\0\0\0\0\0', 'latin1')),
    box('iprp', box('ipco', ispe)),
  );
  return Buffer.concat([ftyp, meta, box('mdat', fill(tag, size - ftyp.length - meta.length - 8))]);
};

const MAKERS: Record<ImageKind, Maker> = { jpeg, png, gif, webp, avif };
