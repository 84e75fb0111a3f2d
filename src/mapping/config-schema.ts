// The `mapping` of a feed in config. (Placeholder: the mapping module owns and refines it.)
import { z } from 'zod';

export const MappingConfig = z.strictObject({
  preset: z.string().optional(),
  fields: z.record(z.string(), z.unknown()).default({}),
  defaults: z.record(z.string(), z.unknown()).default({}),
  extension: z.array(z.string()).default([]),
});
export type MappingConfig = z.infer<typeof MappingConfig>;
