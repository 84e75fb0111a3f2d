// The answers of a create and an update: their Data's fast paths (quickCreateData, quickUpdateData)
// against the rules they speed up (zod's CreateListingData and UpdateListingData): they never
// accept what zod rejects and give zod's output when they accept; what they leave, zod decides.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CreateListingData, quickCreateData, quickUpdateData, UpdateListingData } from '../../src/api/schemas.js';

/** any JSON value, and the numbers at the edges of an integer */
const data = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(0, -0, 1.5, 2 ** 53, 2 ** 53 - 1, -(2 ** 53) + 1, NaN, Infinity, '12', '', null, undefined),
  fc.integer(),
  fc.double(),
  fc.string(),
);

describe('write answers', () => {
  it.each([
    ['create', CreateListingData, quickCreateData],
    ['update', UpdateListingData, quickUpdateData],
  ] as const)(
    "the %s's quick check accepts only what zod accepts, with zod's output, and takes every plain answer",
    (_name, schema, quick) => {
      fc.assert(
        fc.property(data, (d) => {
          const fast = quick(d);
          const parsed = schema.safeParse(d);
          if (fast !== undefined) expect(parsed).toEqual({ success: true, data: fast });
          // (what zod accepts, the quick check takes too: no answer goes the slow way)
          if (parsed.success) expect(fast).toBe(parsed.data);
        }),
        { numRuns: 3000 },
      );
    },
  );
});
