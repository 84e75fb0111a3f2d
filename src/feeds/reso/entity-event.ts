// The EntityEvent record (RESO RCP-027; the Data Dictionary's EntityEvent resource) and a pushed batch
// of them (RCP-028, in RESO Common Format): one schema for the log's pages (reso-events.ts), the
// worker's push endpoint (server/push-route.ts) and the tests. An event is EntityEventSequence (Int64,
// rising, gaps legal), ResourceName and ResourceRecordKey; no event type and no payload. Extra fields
// (ResourceRecordUrl, a vendor's Data) are allowed and never read: an event is only a hint.
import { z } from 'zod';

export const SEQ = 'EntityEventSequence';

export const EntityEventRecord = z.looseObject({
  [SEQ]: z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,19}$/)]),
  ResourceName: z.string().min(1).max(200),
  ResourceRecordKey: z.union([z.string().min(1).max(2048), z.number()]),
});
export type EntityEventRecord = z.infer<typeof EntityEventRecord>;

/**
 * A push (RCP-028 examples 1 and 2): RESO Common Format, a single record or a batch under `value`,
 * each with `@reso.context` `urn:reso:metadata:2.0:resource:entityevent` (optional here: the RCP shows
 * it, and requires nothing of it).
 */
export const PushedEventsBody = z.union([
  z.looseObject({ '@reso.context': z.string().optional(), value: z.array(EntityEventRecord).min(1) }),
  EntityEventRecord.extend({ '@reso.context': z.string().optional() }),
]);
export type PushedEventsBody = z.infer<typeof PushedEventsBody>;

/** The events of a push, single or batch. */
export function pushedEvents(body: PushedEventsBody): EntityEventRecord[] {
  return 'value' in body && Array.isArray(body.value) ? body.value : [body as EntityEventRecord];
}
