// A change is shown old → new on one line; long values are cut around where they differ, so a
// description whose end changed does not show the same opening twice.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeFieldChange } from '../../src/format/change.js';

const intro = '5 bed townhouse in Manor with covered patio, perfect for Texas evenings';

describe('describeFieldChange', () => {
  it('short values in full', () => {
    expect(describeFieldChange(1380000, 1395000)).toBe('1380000 → 1395000');
    expect(describeFieldChange(undefined, 'Active')).toBe('(unset) → "Active"');
    expect(describeFieldChange(['a.jpg'], ['a.jpg', 'b.jpg'])).toBe('["a.jpg"] → ["a.jpg","b.jpg"]');
  });

  it('two long texts that differ at the end: both excerpts show the difference', () => {
    const line = describeFieldChange(`${intro} and hardwood floors.`, `${intro}, new roof.`);
    const [before, after] = line.split(' → ');
    expect(before).toContain('and hardwood');
    expect(after).toContain('new roof');
    expect(before!.startsWith('…')).toBe(true);
  });

  it('a long old value not kept: said so, the new value cut', () => {
    expect(describeFieldChange(undefined, 'x'.repeat(300), true)).toMatch(/^\(long value, not kept\) → "x+…$/);
  });

  it('each side stays within 60 characters and shows where the two differ', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.string({ minLength: 1, maxLength: 120 }),
        fc.string({ maxLength: 120 }),
        (common, tailA, tailB) => {
          fc.pre(tailA[0] !== tailB[0]);
          const a = common + tailA;
          const b = common + tailB;
          const [before, after] = describeFieldChange(a, b).split(' → ');
          if (JSON.stringify(a).length > 60 || JSON.stringify(b).length > 60) {
            expect(before!.length).toBeLessThanOrEqual(60);
            expect(after!.length).toBeLessThanOrEqual(60);
            expect(before).not.toBe(after);
          }
        },
      ),
    );
  });
});
