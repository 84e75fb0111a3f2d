import { describe, expect, it } from 'vitest';
import { Entries } from '../../src/sync/entries.js';

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
});
