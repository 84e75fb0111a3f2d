// The request budgets of a feed source credential (source.limits), a schema of its own: the vendor
// profiles (vendors/profile.ts) name their documented budgets in it, and config-schema.ts composes it.
import { z } from 'zod';

/** Documented budgets: MLS Grid 2/s, 7200/hour, 40000/day; Trestle 180/minute, 7200/hour (docs/configuration.md). */
export const SourceLimits = z
  .strictObject({
    perSecond: z.number().positive().optional(),
    perMinute: z.number().int().positive().optional(),
    perHour: z.number().int().positive().optional(),
    perDay: z.number().int().positive().optional(),
    bytesPerHour: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'most response bytes (as received) a source may read in an hour, counted in this process (MLS Grid: 4 GB)',
      ),
  })
  .describe('requests per second/minute/hour/day (and bytes per hour) allowed for this source credential');
export type SourceLimits = z.infer<typeof SourceLimits>;
