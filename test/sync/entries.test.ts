import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Entries } from '../../src/sync/model/entries.js';

describe('Entries', () => {
  it('gives back the pairs pushed, in order, as often as asked', () => {
    const e = new Entries();
    e.push('A', '1');
    e.push('B', '2');
    e.push('A', '3');
    expect(e.length).toBe(3);
    expect([...e]).toEqual([
      ['A', '1'],
      ['B', '2'],
      ['A', '3'],
    ]);
    expect([...e]).toEqual([...e]);
    expect(e.keys()).toEqual(['A', 'B', 'A']);
  });

  it('concat: these pairs then the others, neither changed', () => {
    const a = Entries.of([['A', '1']]);
    const b = Entries.of([
      ['B', '2'],
      ['C', '3'],
    ]);
    expect([...a.concat(b)]).toEqual([
      ['A', '1'],
      ['B', '2'],
      ['C', '3'],
    ]);
    expect(a.length).toBe(1);
    expect(b.length).toBe(2);
  });

  it('digests: gives back exactly the values pushed (sha1s in base64url, with or without "2.", packed; anything else as it is)', () => {
    const sha1 = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString('base64url'));
    const digestLike = fc.oneof(
      sha1,
      sha1.map((d) => '2.' + d),
      // near misses: not the one encoding, another length, another prefix
      sha1.map((d) => d.slice(0, 26) + 'B'),
      sha1.map((d) => '1.' + d),
      sha1.map((d) => d + '='),
      sha1.map((d) => d.slice(1)),
    );
    const value = fc.oneof(digestLike, fc.string(), fc.constant('{"AreaUnit":"Square Feet"}'));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 12 }), value), { maxLength: 3000 }),
        fc.boolean(),
        (pairs, digests) => {
          const e = Entries.of(pairs, { digests });
          expect([...e]).toEqual(pairs);
          expect([...e.concat(Entries.of(pairs))]).toEqual([...pairs, ...pairs]);
        },
      ),
      { numRuns: 300 },
    );
    const stamp = createHash('sha1').update('x').digest('base64url');
    expect([
      ...Entries.of(
        [
          ['K', stamp],
          ['L', '2.' + stamp],
        ],
        { digests: true },
      ),
    ]).toEqual([
      ['K', stamp],
      ['L', '2.' + stamp],
    ]);
  });
});
