// An MLS pushing EntityEvents to a consumer's webhook, as RESO RCP-028 ("Push Replication Using
// Webhooks and the RESO EntityEvent Resource", v1.0.1, ratified December 2023;
// https://transport.reso.org/proposals/webhooks-push.html, RESOStandards/transport
// proposals/webhooks-push.md) describes it:
// - `POST` with `Content-Type: application/json` and `Authorization: Bearer <token>`, a long-lived
//   token the consumer gives the producer ("Consumers MUST establish authorization with the provider,
//   using an OAuth2 bearer token");
// - the body in RESO Common Format, `@reso.context: urn:reso:metadata:2.0:resource:entityevent`, with
//   one EntityEvent record (EntityEventSequence, ResourceName, ResourceRecordKey: its example 1) or a
//   batch under `value` (example 2); optionally an `EntityEventSource` header naming the feed (example 4);
// - the consumer MAY answer 429 with Retry-After (seconds or a date) when the producer sends too fast
//   (example 3, "Polite Behavior"), and SHOULD accept and queue events rather than process them as
//   they arrive.
// Where the text leaves room, feedsync assumes (docs/contracts.md, "Pushed EntityEvents"):
// - the answer: the RCP's examples show 200; feedsync answers 202 (queued, not applied): any 2xx is a
//   success to a producer;
// - a pushed EntityEventSequence says nothing of the events not pushed, so it never moves the feed's
//   EntityEvent mark (the poll may read the same events again: a record in step writes nothing);
// - "too fast" is more distinct records waiting than push.maxQueued; a body past push.maxBodyBytes is
//   413 (the RCP names no size limit);
// - the RCP names no event types and no payload (a vendor may add `Data`): feedsync reads neither and
//   fetches every record named from the source by key, so a forged or stale event writes nothing the
//   source does not hold.
import { freshFetch } from './fresh-fetch.js';

export const RESO_CONTEXT = 'urn:reso:metadata:2.0:resource:entityevent';

export interface PushAnswer {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

let sequence = 1000;

/** An EntityEvent record naming a record of `resource`, with a rising sequence (gaps, as the RCP allows). */
export function entityEvent(key: string, resource = 'Property'): Record<string, unknown> {
  sequence += 7;
  return { EntityEventSequence: sequence, ResourceName: resource, ResourceRecordKey: key };
}

/** One push: a single event (example 1) or a batch (example 2). */
export async function push(
  url: string,
  token: string | undefined,
  events: Record<string, unknown> | Record<string, unknown>[],
  headers: Record<string, string> = {},
): Promise<PushAnswer> {
  const body = Array.isArray(events)
    ? { '@reso.context': RESO_CONTEXT, value: events }
    : { '@reso.context': RESO_CONTEXT, ...events };
  return pushRaw(url, token, JSON.stringify(body), headers);
}

export async function pushRaw(
  url: string,
  token: string | undefined,
  body: string,
  headers: Record<string, string> = {},
): Promise<PushAnswer> {
  const res = await freshFetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // (not JSON: the test looks at the status)
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: parsed };
}
