// The list page's fast path (quickListData) against the rule it speeds up (zod's ListData): it
// never accepts what zod rejects, gives zod's very output when it accepts, and accepts the plain
// pages the emulator answers (so a sync does not copy every list item).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListData, quickListData } from '../../src/api/schemas.js';
import { toListItem } from '../../src/emulator/list-item.js';
import { listing } from '../sync/helpers/listings.js';

const plainItem = (id: number) => toListItem({ ...listing(`M${id}`), ID: id }) as unknown as Record<string, unknown>;

const mutation = fc.oneof(
  fc.constant((it: Record<string, unknown>) => void (it.Extra = 'x')),
  fc.constant((it: Record<string, unknown>) => void delete it.City),
  fc.constant((it: Record<string, unknown>) => void (it.Price = 350000)),
  fc.constant((it: Record<string, unknown>) => void (it.ID = 1.5)),
  fc.constant((it: Record<string, unknown>) => void (it.ID = '7')),
  fc.constant((it: Record<string, unknown>) => void (it.LATITUDE = '30.1')),
  fc.constant((it: Record<string, unknown>) => void (it.LONGITUDE = null)),
  fc.constant((it: Record<string, unknown>) => void (it.Status = undefined)),
  fc.constant((it: Record<string, unknown>) => {
    const { ID, ...rest } = it;
    for (const k of Object.keys(it)) delete it[k];
    Object.assign(it, rest, { ID }); // the same members in another order
  }),
);

describe('quickListData', () => {
  it('accepts a plain page as it is', () => {
    const page = { List: [plainItem(1), plainItem(2)], VirtualCount: 2 };
    expect(quickListData(page)).toBe(page);
    expect(JSON.stringify(quickListData(page))).toBe(JSON.stringify(ListData.parse(page)));
  });

  it("never accepts what zod rejects, and gives zod's output (members and order) when it accepts", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 1000 }), fc.option(mutation, { nil: undefined })), {
          maxLength: 5,
        }),
        fc.constantFrom<unknown>(3, 0, -1, 2.5, '3'),
        fc.boolean(),
        (items, virtualCount, extraMember) => {
          const List = items.map(([id, mutate]) => {
            const it = plainItem(id);
            mutate?.(it);
            return it;
          });
          const data: Record<string, unknown> = { List, VirtualCount: virtualCount, ...(extraMember && { Next: 1 }) };
          const quick = quickListData(data);
          const slow = ListData.safeParse(data);
          if (quick) {
            expect(slow.success).toBe(true);
            expect(JSON.stringify(quick)).toBe(JSON.stringify(slow.data));
          }
        },
      ),
    );
  });
});
