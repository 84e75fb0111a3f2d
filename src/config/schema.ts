// The feedsync.yaml contract (docs/contracts.md, "The config file"). One schema, with defaults and descriptions,
// parsed once at start.
import type { LineOf } from './issues.js';
import { z } from 'zod';
import { AlertsConfig } from '../alerts/config-schema.js';
import { AskRequest, ChatbotSettings } from '../api/schemas.js';
import { FeedSource } from '../feeds/config-schema.js';
import { LISTING_FIELDS } from '../listing/schema.js';
import { FeedMediaConfig, MediaConfig } from '../media/config-schema.js';
import { MappingConfig } from '../mapping/config-schema.js';
import { DisplayConfig, resolveDisplay, type DisplayRules } from '../mapping/display-config.js';
import { restrictedReads } from '../mapping/restricted-fields.js';
import { isPresetName, presetNamed } from '../mapping/presets/registry.js';
import { CronPattern, intervalUnder, TimeZone } from './cron.js';
import { bearerToken } from './secret-length.js';
import { selectGapMessage, selectGaps, type SelectedFeed } from './select-reads.js';
import { RedisConfig } from '../redis/config-schema.js';
import { peerRule } from '../net/peer-address.js';

export { DEFAULT_REDIS_URL, RedisConfig } from '../redis/config-schema.js';

/**
 * A duration in ms, bounded: Node's timers treat anything above 2^31-1 ms as 1 ms, so an unbounded
 * `timeoutMs: 3000000000` would time every call out at once.
 */
export const durationMs = (fallback: number, max: number) => z.number().int().min(1).max(max).default(fallback);

const HOUR_MS = 3_600_000;

export const ApiConfig = z.strictObject({
  baseUrl: z
    .union([z.literal('embedded'), z.string().url()], {
      error: (iss) =>
        `must be "embedded" or an http(s) URL like https://api.example.com (got ${JSON.stringify(iss.input)})`,
    })
    .describe('service base URL, or "embedded" to start the local emulator in-process'),
  secretKey: z.string().min(1).describe('Authorization header (edit, message, create, update, delete)'),
  sessionKey: z.string().min(1).describe('chatrobot-sessionkey header (list)'),
  concurrency: z.number().int().min(1).max(256).default(8).describe('API calls in flight at once'),
  ratePerSecond: z.number().positive().max(10_000).default(20).describe('client-side token bucket'),
  timeoutMs: durationMs(30_000, 10 * 60_000).describe('total deadline of one API call attempt, response body included'),
  maxResponseBytes: z
    .number()
    .int()
    .positive()
    .max(1024 ** 3)
    .default(8 * 1024 * 1024)
    .describe('most bytes of one API response body; a larger one fails the call'),
  retries: z.number().int().min(0).max(20).default(4).describe('retries on network errors, 5xx, 408, 429'),
  pageSize: z.number().int().min(1).max(10_000).default(100).describe('PageSize asked of RealEstateList'),
  maxPages: z
    .number()
    .int()
    .min(1)
    .default(100_000)
    .describe('most RealEstateList pages one pass reads; more is an error (an endless list)'),
});
export type ApiConfig = z.infer<typeof ApiConfig>;

const SmokeConfig = z.strictObject({
  sessionId: z.number().int(),
  message: z.string().min(1),
  stream: z.boolean().default(true).describe('also check the streamed form'),
});

export const ChatbotConfig = z.strictObject({
  serialNumber: z.string().min(1),
  settings: ChatbotSettings.optional(),
  smoke: SmokeConfig.optional(),
  schedule: z
    .strictObject({ settings: CronPattern.optional(), smoke: CronPattern.optional(), tz: TimeZone.optional() })
    .optional()
    .describe('cron patterns for the settings push and the smoke job'),
});
export type ChatbotConfig = z.infer<typeof ChatbotConfig>;

const listingField = z.enum(LISTING_FIELDS as [string, ...string[]]);

export const DeletesConfig = z.strictObject({
  mode: z.enum(['mirror', 'keep']).default('mirror'),
  maxFraction: z
    .number()
    .min(0)
    .max(1, { error: (iss) => fractionMessage(iss.input) })
    .default(0.25)
    .describe('most of the remote listings one run may delete'),
  maxCount: z.number().int().min(0).default(500),
  graceHours: z
    .number()
    .min(0)
    .max(24 * 366)
    .default(0)
    .describe('delete only after missing from the feed this long'),
  batchSize: z.number().int().min(1).max(1000).default(100),
});
export type DeletesConfig = z.infer<typeof DeletesConfig>;

const ScheduleConfig = z.strictObject({
  cron: CronPattern,
  tz: TimeZone.optional(),
  full: CronPattern.optional().describe(
    'incremental RESO feeds: a second cron for a full pull (hard deletes, records that left the filter, anything an incremental pull missed)',
  ),
  reconcileCron: CronPattern.optional().describe(
    'live RESO feeds: a cron for a keys-only reconcile (hard deletes and records that left the filter, for a tenth of a full pull\'s bytes or less; e.g. "15 * * * *", hourly)',
  ),
  driftCron: z
    .union([CronPattern, z.literal(false)])
    .optional()
    .describe(
      'live RESO feeds: when the worker checks the source\'s dictionary against the mapping (feed drift; the server is read at most once a day whatever the cron); default "41 * * * *", hourly; false: never',
    ),
});

/** feeds[].push: pushed EntityEvents (RESO RCP-028) at the worker's POST /reso/events/<feed> (server/push-route.ts) */
const PushConfig = z.strictObject({
  token: bearerToken(
    'a long random value the MLS sends as `Authorization: Bearer <token>` (e.g. `openssl rand -hex 32` into ${FEEDSYNC_PUSH_TOKEN})',
  ).describe(
    'the bearer token the MLS sends with each push; from the environment, e.g. ${FEEDSYNC_PUSH_TOKEN} (a secret: masked in every output)',
  ),
  maxQueued: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10_000)
    .describe(
      "most records (distinct keys) waiting for the feed's push job; a push past it is answered 429 with Retry-After, nothing of it kept",
    ),
  maxBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 << 20)
    .default(1 << 20)
    .describe('largest push body read; a larger one is answered 413'),
  coalesceMs: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(2000)
    .describe('a push job waits this long after the first event it will fetch, so a burst of pushes makes one job'),
  retryAfterSeconds: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(60)
    .describe('the Retry-After of a 429 (push.maxQueued reached)'),
  maxKeysPerJob: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe('most records one push job fetches (and asks the chatbot about); the rest wait for the next job'),
  minIntervalMs: z
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(10_000)
    .describe('a push job of the feed starts at least this long after the previous one started'),
  sourceShare: z
    .number()
    .gt(0)
    .max(1, { error: (iss) => fractionMessage(iss.input) })
    .default(0.25)
    .describe(
      "the share of the source credential's request budget (source.limits) the feed's push jobs may use: pulls keep the rest",
    ),
});
export type PushConfig = z.infer<typeof PushConfig>;

/** The drift check's tick when a live RESO feed's schedule names none: hourly, so a read due after 24 h waits an hour at most. */
export const DEFAULT_DRIFT_CRON = '41 * * * *';

/** A feed without its own `ignore` takes its preset's derived fields (DaysOnMarket): `ignore: []` turns that off. */
/** A feed parsed before (displayRules made by the parse) parses again as its config did: what is derived is derived anew. */
function withoutDerived(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || !('displayRules' in raw)) return raw;
  const { displayRules: _derived, ...config } = raw as Record<string, unknown>;
  return config;
}

function presetIgnore(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || 'ignore' in raw) return raw;
  const preset = (raw as { mapping?: { preset?: unknown } }).mapping?.preset;
  const fields = typeof preset === 'string' && isPresetName(preset) ? presetNamed(preset).ignore : undefined;
  return fields?.length ? { ...raw, ignore: fields } : raw;
}

/** feeds[].chatbots[]: a chatbot and the records it takes (mapping/where.ts) */
const FeedRoute = z.strictObject({
  serialNumber: z.string().min(1),
  where: z
    .record(z.string().min(1), z.array(z.union([z.string(), z.number(), z.boolean()])).min(1))
    .optional()
    .describe(
      'source field (dotted path) → the values a record must hold to go to this chatbot, compared as map compares',
    ),
});

export const FeedConfig = z.preprocess(
  (raw) => presetIgnore(withoutDerived(raw)),
  z
    .strictObject({
      name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ - only'),
      chatbot: z
        .string()
        .min(1)
        .optional()
        .describe('serialNumber of the chatbot the listings belong to (or chatbots)'),
      chatbots: z
        .array(FeedRoute)
        .min(1)
        .optional()
        .describe(
          'instead of chatbot: the chatbots the records are routed to, each with its where (no where: every record)',
        ),
      keyBy: z.enum(['MLSNumber', 'URL']).default('MLSNumber'),
      source: FeedSource,
      mapping: MappingConfig.prefault({}),
      deletes: DeletesConfig.prefault({}),
      ignore: z
        .array(listingField)
        .default([])
        .describe("fields that alone never cause an update (default: the preset's derived fields, e.g. DaysOnMarket)"),
      schedule: ScheduleConfig.optional(),
      deadlineMinutes: z
        .number()
        .positive()
        .max(1440)
        .default(120)
        .describe('a run of this feed stops (outcome aborted, retried) after this long'),
      minValidFraction: z
        .number()
        .min(0)
        .max(1)
        .default(0.5)
        .describe(
          "a full read whose rejected records bring its valid ones below this fraction of the last good full run's ends rejected (nothing deleted, exit 6; --force accepts it; 0: off); a read with records and none valid is rejected whatever this says",
        ),
      media: FeedMediaConfig.prefault({}).describe("this feed's photos (media.mirror)"),
      display: DisplayConfig.optional().describe(
        'what the MLS allows the chatbot to show: purpose, statuses, sold window, attribution, restricted fields (docs/display-rules.md)',
      ),
      push: PushConfig.optional().describe(
        "live RESO feeds: EntityEvents the MLS pushes (RCP-028) to the worker's POST /reso/events/<name>, each record fetched by key",
      ),
    })
    // the display rules with every default filled in, resolved here once: the sync, preview, explain and undo read these
    .transform((feed) => ({ ...feed, displayRules: resolveDisplay(feed.display, feed.source.kind) }))
    .superRefine((feed, ctx) => {
      checkRestricted(feed, ctx);
      checkSelect(feed, ctx);
      if ((feed.chatbot === undefined) === (feed.chatbots === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: feed.chatbot === undefined ? ['chatbot'] : ['chatbots'],
          message:
            feed.chatbot === undefined
              ? 'is required, or chatbots (records routed to several chatbots by where)'
              : 'both chatbot and chatbots are set; use chatbot for one chatbot that takes every record, or chatbots to route records by where',
        });
      }
      const sns = new Set<string>();
      feed.chatbots?.forEach((c, i) => {
        if (sns.has(c.serialNumber))
          ctx.addIssue({
            code: 'custom',
            path: ['chatbots', i, 'serialNumber'],
            message: `chatbot ${c.serialNumber} is listed twice`,
          });
        sns.add(c.serialNumber);
      });
      if (feed.schedule?.reconcileCron && !(feed.source.kind === 'reso' && feed.source.url)) {
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', 'reconcileCron'],
          message:
            'is for live RESO feeds (source.kind: reso with a url); a file is read whole by schedule.cron, which finds what a reconcile finds',
        });
      }
      if (feed.push && !(feed.source.kind === 'reso' && feed.source.url)) {
        ctx.addIssue({
          code: 'custom',
          path: ['push'],
          message:
            'is for live RESO feeds (source.kind: reso with a url): a pushed event names a record, which is fetched from the server by key',
        });
      }
      if (feed.schedule?.driftCron && !(feed.source.kind === 'reso' && feed.source.url)) {
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', 'driftCron'],
          message: "is for live RESO feeds (source.kind: reso with a url): feed drift reads a server's $metadata",
        });
      }
      if (feed.schedule?.full && !(feed.source.kind === 'reso' && feed.source.incremental)) {
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', 'full'],
          message:
            'is for incremental RESO feeds (source.kind: reso, source.incremental: true); this feed is always read in full by schedule.cron',
        });
      }
    }),
);
export type FeedConfig = z.infer<typeof FeedConfig>;

/** A mapping of an idx or vow feed (or any feed with `display.withhold`) that reads a restricted field: an issue naming the field and the rule. */
function checkRestricted(feed: { mapping: MappingConfig; displayRules: DisplayRules }, ctx: z.RefinementCtx): void {
  const display = feed.displayRules;
  for (const read of restrictedReads(feed.mapping, display)) {
    const why =
      read.why === 'display.withhold'
        ? 'listed in display.withhold'
        : `restricted: ${read.why} (docs/display-rules.md)`;
    const purpose = display.purpose === 'internal' ? 'this feed' : `a display.purpose ${display.purpose} feed`;
    ctx.addIssue({
      code: 'custom',
      path: read.path,
      message: `${read.rule} reads ${read.field}${read.source === read.field ? '' : ` (${read.source})`}, ${why}; ${purpose} never sends it: take it out of the rule${display.purpose === 'internal' ? '' : ', or set display.purpose: internal for a back-office chatbot that may show it'}`,
    });
  }
}

/** A RESO source's select that leaves out a field the feed reads: one issue at the select, naming each (select-reads.ts). */
function checkSelect(feed: SelectedFeed, ctx: z.RefinementCtx): void {
  const gaps = selectGaps(feed);
  if (gaps.length) ctx.addIssue({ code: 'custom', path: ['source', 'select'], message: selectGapMessage(gaps) });
}

/** worker.allowFrom: an IPv4 or IPv6 address, or a CIDR block of either */
const PeerAddress = z.string().refine((v) => peerRule(v) !== undefined, {
  error: (iss) => `is an IP address or a CIDR block (10.0.0.5, 10.0.0.0/8, fd00::/8), not ${JSON.stringify(iss.input)}`,
});

export const Config = z
  .strictObject({
    api: ApiConfig,
    redis: RedisConfig.optional(),
    chatbots: z.array(ChatbotConfig).default([]),
    feeds: z.array(FeedConfig).default([]),
    worker: z
      .strictObject({
        port: z.number().int().min(0).max(65535).default(9464),
        host: z
          .string()
          .min(1)
          .default('127.0.0.1')
          .describe("address the worker's HTTP face listens on; 0.0.0.0 for every interface (containers)"),
        allowedHosts: z
          .array(z.string().min(1))
          .default([])
          .describe(
            "Host names the worker's pages answer besides localhost, 127.0.0.1, ::1 and worker.host (DNS rebinding guard)",
          ),
        allowFrom: z
          .array(PeerAddress)
          .default([])
          .describe(
            'addresses (or CIDR blocks, 10.0.0.0/8) whose requests /status, /ui and /metrics answer besides loopback; from any other address they need the admin login (FEEDSYNC_UI_TOKEN), else 403',
          ),
        historySize: z.number().int().min(1).max(10_000).default(50),
        watchdogSeconds: z.number().int().positive().max(86_400).default(300),
        scheduleCheckSeconds: z
          .number()
          .int()
          .min(1)
          .max(3600)
          .default(60)
          .describe(
            "how often a worker looks for job schedulers Redis lost (a restart without persistence, a FLUSHALL), or a scheduler's next job lost (a key deleted or evicted), and writes them again; it also looks when its connection is back after a drop",
          ),
        shutdownTimeoutMs: durationMs(30_000, HOUR_MS),
        concurrency: z
          .number()
          .int()
          .min(1)
          .max(64)
          .default(2)
          .describe('jobs of one queue a worker process runs at once'),
        // BullMQ's defaults are 30 s, 30 s and 1 (docs.bullmq.io, "Stalled"): a dead worker's job
        // resumed up to a minute later. These resume it in 6-11 s from another host (a sibling in its
        // PID namespace hands it back within a second: src/queue/workers.ts says how), at a few dozen
        // Redis calls a minute per worker (docs/runbook.md, "Several workers").
        lockDurationMs: durationMs(8000, HOUR_MS).describe(
          "BullMQ job lock, renewed every quarter of it; a dead worker's job is taken over once it expires (plus up to stalledIntervalMs), or within a second by a worker in its PID namespace",
        ),
        stalledIntervalMs: durationMs(3000, HOUR_MS).describe(
          'how often the queue is looked at for jobs whose lock expired (one look per interval across the workers)',
        ),
        // A worker's heap and a job's Buffers are given back only by a major collection, which V8 runs
        // seldom while its heap is half used, and the Buffers' pages only by malloc_trim (issue 55
        // point 5); 0 leaves it to V8 and glibc.
        idleCollectMs: z
          .number()
          .int()
          .min(0)
          .max(HOUR_MS)
          .default(2000)
          .describe(
            "a worker with no active job for this long runs one full garbage collection, then glibc's malloc_trim where it can (its memory back between jobs; the next job starts on a smaller heap); 0: never",
          ),
        maxStalledCount: z
          .number()
          .int()
          .min(0)
          .max(10)
          .default(2)
          .describe(
            'times a job may be taken over after its worker died before it fails (a job that kills its worker)',
          ),
        minScheduleIntervalSeconds: z
          .number()
          .int()
          .min(1)
          .max(86_400)
          .default(60)
          .describe('a schedule that runs more often than this is refused'),
      })
      .prefault({}),
    push: z
      .strictObject({
        port: z
          .number()
          .int()
          .min(0)
          .max(65535)
          .default(9465)
          .describe("port of the worker's push listener (POST /reso/events/<feed>, and nothing else)"),
        host: z
          .string()
          .min(1)
          .default('127.0.0.1')
          .describe(
            'address the push listener listens on; 0.0.0.0 for every interface (what the MLS reaches, through TLS)',
          ),
      })
      .prefault({})
      .describe("the worker's listener for pushed EntityEvents (feeds[].push), apart from worker.port"),
    state: z.strictObject({ file: z.string().optional() }).optional().describe('state file when no redis'),
    changeLog: z
      .strictObject({
        retentionDays: z.number().positive().default(30).describe('changes older than this are dropped'),
        maxPerFeed: z
          .number()
          .int()
          .min(100)
          .default(100_000)
          .describe('most changes kept per feed (Redis) / sizes the file'),
        maxPerRun: z
          .number()
          .int()
          .min(1)
          .default(50_000)
          .describe('most changes recorded for one run; the rest are counted'),
        maxBytesPerRun: z
          .number()
          .int()
          .min(65_536)
          .default(6 << 20)
          .describe('most bytes of changes (JSON, long values as excerpts) recorded for one run; the rest are counted'),
        maxWholeBytesPerRun: z
          .number()
          .int()
          .min(0)
          .default(6 << 20)
          .describe(
            'most bytes of whole listings (compressed, kept before each update and delete so `feedsync undo` can restore them) one run keeps',
          ),
        maxWholeBytesPerFeed: z
          .number()
          .int()
          .min(0)
          .default(64 << 20)
          .describe("most bytes of whole listings kept per feed across its runs (Redis); the oldest runs' go first"),
      })
      .prefault({})
      .describe('the per-listing change log read by `feedsync history` and `runs show`'),
    media: MediaConfig.prefault({}).describe('listing photos mirrored to S3-compatible storage (docs/media.md)'),
    alerts: AlertsConfig.prefault({}).describe('where alerts go and the rules that raise them'),
    chatCheck: z
      .strictObject({
        enabled: z
          .boolean()
          .default(false)
          .describe('after each real sync, ask the chatbot about listings it just got'),
        listings: z.number().int().min(1).max(20).default(3).describe('listings asked about per run'),
      })
      .prefault({})
      .describe("the chat check: uses each chatbot's smoke session (chatbots[].smoke.sessionId)"),
  })
  .superRefine((cfg, ctx) => {
    checkScheduleIntervals(cfg, ctx);
    const names = new Set<string>();
    cfg.feeds.forEach((f, i) => {
      if (names.has(f.name))
        ctx.addIssue({ code: 'custom', path: ['feeds', i, 'name'], message: `duplicate feed name ${f.name}` });
      names.add(f.name);
    });
    const sns = new Set<string>();
    cfg.chatbots.forEach((c, i) => {
      if (sns.has(c.serialNumber))
        ctx.addIssue({
          code: 'custom',
          path: ['chatbots', i, 'serialNumber'],
          message: `duplicate chatbot ${c.serialNumber}`,
        });
      sns.add(c.serialNumber);
      if (c.smoke) {
        const r = AskRequest.safeParse({ sessionID: c.smoke.sessionId, content: c.smoke.message });
        if (!r.success)
          ctx.addIssue({
            code: 'custom',
            path: ['chatbots', i, 'smoke'],
            message: r.error.issues[0]?.message ?? 'invalid',
          });
      }
    });
  });
export type Config = z.infer<typeof Config>;

/** A loaded config with where it came from: relative feed paths resolve against `dir`. */
export interface LoadedConfig {
  config: Config;
  file: string;
  dir: string;
  /** values a `${VAR:-default}` gave its default because VAR is not set, by path (config/defaulted-keys.ts) */
  defaulted?: ReadonlyMap<string, DefaultedValue>;
  /**
   * the environment variables a value was read from (`${VAR}`, `${VAR:-default}`), by its path as
   * messages name it (api.secretKey, feeds[mls].source.bearerToken, redis.url): a refused credential
   * names the variable to fix (config/env-words.ts), never its value
   */
  fromEnv?: ReadonlyMap<string, readonly string[]>;
  /** the line of a path in the config file, where the file was read */
  lineOf?: LineOf;
}

export interface DefaultedValue {
  variable: string;
  line?: number;
}

function fractionMessage(input: unknown): string {
  const n = Number(input);
  const example = n > 1 && n <= 100 ? `${n / 100} for ${n}%` : '0.25 for 25%';
  return `is a fraction between 0 and 1, not a percentage: write ${example} (got ${JSON.stringify(input)})`;
}

type ConfigShape = {
  feeds: Array<{
    schedule?: { cron: string; tz?: string; full?: string; reconcileCron?: string; driftCron?: string | false };
  }>;
  chatbots: Array<{ schedule?: { settings?: string; smoke?: string; tz?: string } }>;
  worker: { minScheduleIntervalSeconds: number };
};

/** Refuse a schedule that runs more often than worker.minScheduleIntervalSeconds (e.g. every second). */
function checkScheduleIntervals(cfg: ConfigShape, ctx: z.RefinementCtx): void {
  const min = cfg.worker.minScheduleIntervalSeconds;
  const check = (pattern: string | undefined, tz: string | undefined, path: PropertyKey[]) => {
    if (!pattern) return;
    let every: number | undefined;
    try {
      every = intervalUnder(pattern, tz, min);
    } catch {
      return; // a pattern or zone that does not parse has its own issue
    }
    if (every === undefined) return;
    ctx.addIssue({
      code: 'custom',
      path,
      message: `"${pattern}" runs every ${every} s, more often than worker.minScheduleIntervalSeconds (${min} s); use a slower pattern such as "*/10 * * * *", or lower the minimum`,
    });
  };
  cfg.feeds.forEach((f, i) => {
    check(f.schedule?.cron, f.schedule?.tz, ['feeds', i, 'schedule', 'cron']);
    check(f.schedule?.full, f.schedule?.tz, ['feeds', i, 'schedule', 'full']);
    check(f.schedule?.reconcileCron, f.schedule?.tz, ['feeds', i, 'schedule', 'reconcileCron']);
    check(f.schedule?.driftCron || undefined, f.schedule?.tz, ['feeds', i, 'schedule', 'driftCron']);
  });
  cfg.chatbots.forEach((c, i) => {
    check(c.schedule?.settings, c.schedule?.tz, ['chatbots', i, 'schedule', 'settings']);
    check(c.schedule?.smoke, c.schedule?.tz, ['chatbots', i, 'schedule', 'smoke']);
  });
}
