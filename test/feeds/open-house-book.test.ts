// The open-house book (src/feeds/reso/open-house-book.ts): what a run keeps of each listing's open
// houses, on a fixed clock, as plain data.
import { describe, expect, it } from 'vitest';
import { openHouseBook } from '../../src/feeds/reso/open-house-book.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const SAT = { OpenHouseStartTime: '2026-11-28T19:00:00.000Z', OpenHouseEndTime: '2026-11-28T21:00:00.000Z' };
const PAST = { OpenHouseStartTime: '2026-11-26T19:00:00.000Z', OpenHouseEndTime: '2026-11-26T21:00:00.000Z' };
const kept = (id: string, ...oh: Array<[string, typeof SAT]>) =>
  JSON.stringify({ id, oh: oh.map(([k, t]) => ({ k, s: t.OpenHouseStartTime, e: t.OpenHouseEndTime })) });

describe('openHouseBook', () => {
  it('an OpenHouse record moved to another listing, one cancelled by MlgCanView: both listings changed; final keeps only listings with one shown', () => {
    const book = openHouseBook(
      [
        new Map([
          ['L1', kept('1', ['oh-1', SAT])],
          ['L2', kept('2', ['oh-2', SAT])],
        ]),
      ],
      NOW,
    );
    book.apply(
      [
        { OpenHouseKey: 'oh-1', ListingKey: 'L3', ListingId: '3', ...SAT },
        { OpenHouseKey: 'oh-2', ListingKey: 'L2', MlgCanView: false, ...SAT },
      ],
      false,
    );
    expect(book.changed().sort()).toEqual(['L1', 'L2', 'L3']);
    expect([...book.final()]).toEqual([['L3', kept('3', ['oh-1', SAT])]]);
    expect(book.listingId('L3')).toBe('3');
  });

  it('a kept open house that has ended by the clock is a change with no record; nothing else is', () => {
    const book = openHouseBook(
      [
        new Map([
          ['L1', kept('1', ['oh-1', PAST], ['oh-2', SAT])],
          ['L2', kept('2', ['oh-3', SAT])],
        ]),
      ],
      NOW,
    );
    expect(book.changed()).toEqual(['L1']);
    expect(book.shown('L1', '1')).toEqual([{ OpenHouseKey: 'oh-2', ...SAT }]);
  });

  it('a full pull replaces what was kept; a lane whose copy is behind sees its listings as changed', () => {
    const ahead = new Map([['L1', kept('1', ['oh-1', SAT])]]);
    const behind = new Map([['L2', kept('2', ['oh-2', SAT])]]);
    const book = openHouseBook([ahead, behind], NOW);
    book.apply([{ OpenHouseKey: 'oh-1', ListingKey: 'L1', ListingId: '1', ...SAT }], true);
    expect(book.changed().sort()).toEqual(['L1', 'L2']);
    expect([...book.final().keys()]).toEqual(['L1']);
  });

  it('an expanded list: the cancelled and ended left out, learned; a listing with none and none kept is not held', () => {
    const book = openHouseBook([], NOW);
    const shown = book.learn(
      'L1',
      [
        { OpenHouseKey: 'a', ...SAT },
        { OpenHouseKey: 'b', OpenHouseStatus: 'Canceled', ...SAT },
        { OpenHouseKey: 'c', ...PAST },
      ],
      '1',
    );
    expect(shown).toEqual([{ OpenHouseKey: 'a', ...SAT }]);
    expect(book.learn('L2', [], '2')).toEqual([]);
    expect([...book.final().keys()]).toEqual(['L1']);
    expect(book.changed()).toEqual(['L1']);
  });
});
