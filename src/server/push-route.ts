// POST /reso/events/<feed>: EntityEvents an MLS pushes (RESO RCP-028, "Push Replication Using Webhooks
// and the RESO EntityEvent Resource", v1.0.1, ratified December 2023). RCP-028 asks a consumer to
// accept and queue events rather than process them as they arrive, to authorize the producer by an
// OAuth2 bearer token, and allows it a 429 with Retry-After when the producer sends too fast. So:
// - the feed's push.token (at least 32 characters), as `Authorization: Bearer <token>`, compared in
//   constant time (ui-auth.ts sameSecret); an unknown feed or a feed without push is compared against
//   a dummy token of this process, so it costs what a wrong token costs, and is 401 alike; the token
//   is never logged, and refusals are logged at most once a minute per address (refusal-log.ts:
//   those in between are counted into the next line);
// - a JSON body (RESO Common Format: one EntityEvent record, or a batch under `value`) of at most
//   push.maxBodyBytes (413 past it, read no further), parsed by one schema (feeds/reso/entity-event.ts);
// - each ResourceRecordKey is a string of at most 255 characters (RCP-027 types it Edm.String): a JSON
//   number is refused, never rounded to another key past 2^53, and so is a longer key (400);
// - events of the feed's resource and Media events are kept, coalesced per record, for the feed's
//   push job (queue/push-events.ts), and the answer is 202 at once (RCP-028's examples show 200; any
//   2xx is success to a producer: 202 says it was queued, not applied); events of other resources are
//   counted and dropped; past push.maxQueued records waiting, 429 with Retry-After and nothing kept.
// An event is only a hint: the job fetches each record from the source by key (feeds/reso/reso-push.ts).
import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import express from 'express';
import type { FeedConfig, PushConfig } from '../config/schema.js';
import { pushedEvents, PushedEventsBody, type EntityEventRecord } from '../feeds/reso/entity-event.js';
import type { Logger } from '../log.js';
import { acceptPushed, type PushedRef, type Queues, type RedisClient } from '../queue/index.js';
import { PUSH_PATH } from './http-guard.js';
import { refusalLog } from './refusal-log.js';
import { sameSecret } from './ui-auth.js';

export interface PushDeps {
  redis: RedisClient;
  queues: Queues;
  prefix: string;
  feeds: readonly FeedConfig[];
  logger: Logger;
}

/** longest ResourceRecordKey kept (a listing key longer than any MLS's) */
export const MAX_PUSHED_KEY = 255;

type PushFeed = FeedConfig & { push: PushConfig; source: { kind: 'reso'; resource: string } };

export function pushRouter(deps: PushDeps): Router {
  const byName = new Map<string, PushFeed>();
  for (const f of deps.feeds) if (f.push && f.source.kind === 'reso') byName.set(f.name, f as PushFeed);
  // what a request for no push feed is compared against: the same work as a wrong token
  const dummy = randomBytes(32).toString('hex');
  const refused = refusalLog(deps.logger);
  const router = express.Router();
  router.post(`${PUSH_PATH}:feed`, (req, res) => {
    const feed = byName.get(req.params.feed ?? '');
    const matches = bearerMatches(req.headers.authorization, feed?.push.token ?? dummy);
    if (!feed || !matches) {
      refused(req.socket.remoteAddress, String(req.params.feed).slice(0, 100));
      res
        .set('WWW-Authenticate', 'Bearer realm="feedsync push"')
        .status(401)
        .json({ error: "needs the feed's push.token as Authorization: Bearer <token>" });
      return;
    }
    receive(req, res, feed, deps).catch((err: unknown) => {
      deps.logger.warn(
        { err: err instanceof Error ? err.message : String(err), feed: feed.name },
        'pushed events could not be queued',
      );
      if (!res.headersSent)
        res
          .status(503)
          .set('Retry-After', '30')
          .json({ error: 'the events could not be queued (Redis); send them again' });
    });
  });
  return router;
}

async function receive(req: Request, res: Response, feed: PushFeed, deps: PushDeps): Promise<void> {
  if (!/^application\/(.+\+)?json\b/i.test(req.headers['content-type'] ?? '')) {
    res
      .status(415)
      .json({ error: 'the body is JSON (Content-Type: application/json): EntityEvent records in RESO Common Format' });
    return;
  }
  const body = await readBody(req, feed.push.maxBodyBytes);
  if (body === undefined) {
    res
      .set('Connection', 'close')
      .status(413)
      .json({ error: `the body is larger than push.maxBodyBytes (${feed.push.maxBodyBytes}); send smaller batches` });
    return;
  }
  const events = parseEvents(body);
  if (typeof events === 'string') {
    res.status(400).json({ error: events });
    return;
  }
  const refsOrError = refsOf(events, feed.source.resource);
  if (typeof refsOrError === 'string') {
    res.status(400).json({ error: refsOrError });
    return;
  }
  const { refs, ignored } = refsOrError;
  if (refs.length === 0) {
    res.status(202).json({ accepted: 0, ignored });
    return;
  }
  const accepted = await acceptPushed(deps.redis, deps.queues, deps.prefix, feed.name, refs, feed.push);
  if (accepted.status === 'full') {
    const wait = feed.push.retryAfterSeconds;
    deps.logger.warn(
      { feed: feed.name, waiting: accepted.waiting, events: events.length },
      `push refused: push.maxQueued (${feed.push.maxQueued}) records already wait; Retry-After ${wait} s`,
    );
    res
      .set('Retry-After', String(wait))
      .status(429)
      .json({
        error: `more than push.maxQueued (${feed.push.maxQueued}) records would wait for the feed's push job; send again in ${wait} s`,
        waiting: accepted.waiting,
      });
    return;
  }
  deps.logger.info(
    {
      feed: feed.name,
      events: events.length,
      ignored,
      waiting: accepted.waiting,
      jobId: accepted.jobId,
      source: req.headers.entityeventsource,
    },
    'pushed events queued',
  );
  res.status(202).json({ accepted: refs.length, ignored, waiting: accepted.waiting, jobId: accepted.jobId });
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  // (compared whatever the header: a malformed one costs what a wrong token costs)
  const same = sameSecret(m?.[1] ?? '', token);
  return m !== null && same;
}

/** The body, or undefined once it is larger than `max` (a declared Content-Length past it is not read at all). */
async function readBody(req: Request, max: number): Promise<Buffer | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > max) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function parseEvents(body: Buffer): EntityEventRecord[] | string {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (err) {
    return `the body is not JSON: ${(err as Error).message}`;
  }
  const r = PushedEventsBody.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    return `the body is not an EntityEvent record or a batch of them under "value" (RESO RCP-028): ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`;
  }
  return pushedEvents(r.data);
}

/** The records a feed fetches for these events: its resource's keys and Media records' keys; the rest counted. A key that is no string of at most MAX_PUSHED_KEY characters: what is wrong, and nothing kept. */
function refsOf(
  events: readonly EntityEventRecord[],
  resource: string,
): { refs: PushedRef[]; ignored: number } | string {
  const refs: PushedRef[] = [];
  let ignored = 0;
  for (const [i, e] of events.entries()) {
    const key = e.ResourceRecordKey;
    const at = events.length > 1 ? `value[${i}].ResourceRecordKey` : 'ResourceRecordKey';
    if (typeof key !== 'string')
      return `${at} is a JSON number (${String(key).slice(0, 30)}); it is a string (RESO RCP-027: Edm.String): send it quoted, as the MLS's key reads ("${String(key).slice(0, 30)}"), so no digit is lost`;
    if (key.length > MAX_PUSHED_KEY) return `${at} is ${key.length} characters; a key is at most ${MAX_PUSHED_KEY}`;
    if (e.ResourceName === resource) refs.push({ kind: 'record', key });
    else if (e.ResourceName === 'Media') refs.push({ kind: 'media', key });
    else ignored++;
  }
  return { refs, ignored };
}
