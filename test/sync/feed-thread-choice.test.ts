// When a feed is read by a thread of its own (sync-run.ts, mostlyMapped): only when most of its
// records will be mapped, judged by its lanes' stored record stamps against the listings they wrote.
import { describe, expect, it } from 'vitest';
import { mostlyMapped } from '../../src/sync/run/sync-run.js';

describe('mostlyMapped', () => {
  it('a first sync (nothing written yet) maps every record', () => {
    expect(mostlyMapped([{ stamps: 0, written: 0 }])).toBe(true);
    expect(mostlyMapped([])).toBe(true);
  });

  it('a rerun whose records are stamped maps few: no thread', () => {
    expect(mostlyMapped([{ stamps: 99_800, written: 99_800 }])).toBe(false);
    expect(mostlyMapped([{ stamps: 50, written: 100 }])).toBe(false);
  });

  it('a feed without stamps (its mapping reads the clock) or with stamps for fewer than half its listings maps most', () => {
    expect(mostlyMapped([{ stamps: 0, written: 100_000 }])).toBe(true);
    expect(mostlyMapped([{ stamps: 49, written: 100 }])).toBe(true);
  });

  it("sums a routed feed's lanes", () => {
    expect(
      mostlyMapped([
        { stamps: 0, written: 10 },
        { stamps: 90, written: 90 },
      ]),
    ).toBe(false);
    expect(
      mostlyMapped([
        { stamps: 0, written: 60 },
        { stamps: 40, written: 40 },
      ]),
    ).toBe(true);
  });
});
