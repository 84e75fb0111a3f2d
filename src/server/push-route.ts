// POST /reso/events/<feed>: EntityEvents an MLS pushes (RESO RCP-028, "Push Replication Using Webhooks
// and the RESO EntityEvent Resource", v1.0.1, ratified December 2023). RCP-028 asks a consumer to
// accept and queue events rather than process them as they arrive, to authorize the producer by an
// OAuth2 bearer token, and allows it a 429 with Retry-After when the producer sends too fast. So:
// - the feed's push.token, as `Authorization: Bearer <token>`, compared in constant time (ui-auth.ts
//   sameSecret); anything else, an unknown feed or a feed without push included, is 401, and the
//   token is never logged;
// - a JSON body (RESO Common Format: one EntityEvent record, or a batch under `value`) of at most
//   push.maxBodyBytes (413 past it, read no further), parsed by one schema (feeds/reso/entity-event.ts);
// - events of the feed's resource and Media events are kept, coalesced per record, for the feed's
//   push job (queue/push-events.ts), and the answer is 202 at once (RCP-028's examples show 200; any
//   2xx is success to a producer: 202 says it was queued, not applied); events of other resources are
//   counted and dropped; past push.maxQueued records waiting, 429 with Retry-After and nothing kept.
// An event is only a hint: the job fetches each record from the source by key (feeds/reso/reso-push.ts).
import type { Request, Response, Router } from 'express';
import express from 'express';
import type { FeedConfig, PushConfig } from '../config/schema.js';
import { pushedEvents, PushedEventsBody, type EntityEventRecord } from '../feeds/reso/entity-event.js';
import type { Logger } from '../log.js';
import { acceptPushed, type PushedRef, type Queues, type RedisClient } from '../queue/index.js';
import { PUSH_PATH } from './http-guard.js';
import { sameSecret } from './ui-auth.js';

export interface PushDeps {
  redis: RedisClient;
  queues: Queues;
  prefix: string;
  feeds: readonly FeedConfig[];
  logger: Logger;
}

type PushFeed = FeedConfig & { push: PushConfig; source: { kind: 'reso'; resource: string } };

export function pushRouter(deps: PushDeps): Router {
  const byName = new Map<string, PushFeed>();
  for (const f of deps.feeds) if (f.push && f.source.kind === 'reso') byName.set(f.name, f as PushFeed);
  const router = express.Router();
  router.post(`${PUSH_PATH}:feed`, (req, res) => {
    receive(req, res, byName.get(req.params.feed ?? ''), deps).catch((err: unknown) => {
      deps.logger.warn({ err: err instanceof Error ? err.message : String(err), feed: req.params.feed }, 'pushed events could not be queued');
      if (!res.headersSent) res.status(503).set('Retry-After', '30').json({ error: 'the events could not be queued (Redis); send them again' });
    });
  });
  return router;
}

async function receive(req: Request, res: Response, feed: PushFeed | undefined, deps: PushDeps): Promise<void> {
  if (!feed || !bearerMatches(req.headers.authorization, feed.push.token)) {
    deps.logger.warn({ feed: String(req.params.feed).slice(0, 100), from: req.socket.remoteAddress }, 'push refused: no such push feed, or not its bearer token');
    res.set('WWW-Authenticate', 'Bearer realm="feedsync push"').status(401).json({ error: "needs the feed's push.token as Authorization: Bearer <token>" });
    return;
  }
  if (!/^application\/(.+\+)?json\b/i.test(req.headers['content-type'] ?? '')) {
    res.status(415).json({ error: 'the body is JSON (Content-Type: application/json): EntityEvent records in RESO Common Format' });
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
  const { refs, ignored } = refsOf(events, feed.source.resource);
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
      .json({ error: `more than push.maxQueued (${feed.push.maxQueued}) records would wait for the feed's push job; send again in ${wait} s`, waiting: accepted.waiting });
    return;
  }
  deps.logger.info(
    { feed: feed.name, events: events.length, ignored, waiting: accepted.waiting, jobId: accepted.jobId, source: req.headers.entityeventsource },
    'pushed events queued',
  );
  res.status(202).json({ accepted: refs.length, ignored, waiting: accepted.waiting, jobId: accepted.jobId });
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m !== null && sameSecret(m[1]!, token);
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

/** The records a feed fetches for these events: its resource's keys and Media records' keys; the rest counted. */
function refsOf(events: readonly EntityEventRecord[], resource: string): { refs: PushedRef[]; ignored: number } {
  const refs: PushedRef[] = [];
  let ignored = 0;
  for (const e of events) {
    const key = String(e.ResourceRecordKey);
    if (e.ResourceName === resource) refs.push({ kind: 'record', key });
    else if (e.ResourceName === 'Media') refs.push({ kind: 'media', key });
    else ignored++;
  }
  return { refs, ignored };
}
