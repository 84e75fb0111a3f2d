// What a photo is, by its first bytes (never by the server's Content-Type, which hosts get wrong and
// error pages lie about): JPEG, PNG, GIF, WebP, AVIF. Anything else is not stored.

export interface ImageType {
  contentType: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp' | 'image/avif';
  ext: 'jpg' | 'png' | 'gif' | 'webp' | 'avif';
}

/** Bytes enough to tell every type below apart (an AVIF's ftyp box lists its brands in its first 32 or so). */
export const SNIFF_BYTES = 64;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function imageTypeOf(head: Uint8Array): ImageType | undefined {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff)
    return { contentType: 'image/jpeg', ext: 'jpg' };
  if (b.length >= 8 && b.subarray(0, 8).equals(PNG)) return { contentType: 'image/png', ext: 'png' };
  const ascii = (from: number, to: number) => b.subarray(from, to).toString('latin1');
  if (b.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a'))
    return { contentType: 'image/gif', ext: 'gif' };
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP')
    return { contentType: 'image/webp', ext: 'webp' };
  if (isAvif(b)) return { contentType: 'image/avif', ext: 'avif' };
  return undefined;
}

/** An ISO-BMFF file whose ftyp box names avif (still) or avis (sequence) as its major or a compatible brand. */
function isAvif(b: Buffer): boolean {
  if (b.length < 16 || b.toString('latin1', 4, 8) !== 'ftyp') return false;
  const boxEnd = Math.min(b.readUInt32BE(0), b.length);
  const brands = [b.toString('latin1', 8, 12)];
  for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(b.toString('latin1', at, at + 4));
  return brands.some((brand) => brand === 'avif' || brand === 'avis');
}
