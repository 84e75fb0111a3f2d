// What the image format walkers share: a bounds-checked reader over a photo's bytes that stops the
// walk with a reason (never reading past the end), and what a walk finds.

/** Where a format's structure ended (its last byte + 1) and the dimensions it declares. */
export interface Walked {
  end: number;
  width: number;
  height: number;
}

/** Stops a walk: the bytes are not a whole image of the type, and why (a chunk type read from the body shown printable only). */
export class NotWhole extends Error {
  constructor(why: string) {
    super(why.replace(/[^\x20-\x7e]/g, '?'));
  }
}

export class Reader {
  constructor(readonly b: Buffer) {}
  need(at: number, n: number, what: string): void {
    if (at < 0 || at + n > this.b.length) throw new NotWhole(`cut short in ${what} (byte ${at} of ${this.b.length})`);
  }
  u8(at: number, what: string): number {
    this.need(at, 1, what);
    return this.b[at]!;
  }
  u16be(at: number, what: string): number {
    this.need(at, 2, what);
    return this.b.readUInt16BE(at);
  }
  u16le(at: number, what: string): number {
    this.need(at, 2, what);
    return this.b.readUInt16LE(at);
  }
  u24le(at: number, what: string): number {
    this.need(at, 3, what);
    return this.b.readUIntLE(at, 3);
  }
  u32be(at: number, what: string): number {
    this.need(at, 4, what);
    return this.b.readUInt32BE(at);
  }
  u32le(at: number, what: string): number {
    this.need(at, 4, what);
    return this.b.readUInt32LE(at);
  }
  ascii(at: number, n: number, what: string): string {
    this.need(at, n, what);
    return this.b.toString('latin1', at, at + n);
  }
}
