// The feedsync.yaml contract (DESIGN.md, "Config"). One schema, with defaults and descriptions,
// parsed once at start.
import { z } from 'zod';
import { AskRequest, ChatbotSettings } from '../api/schemas.js';
import { FeedSource } from '../feeds/config-schema.js';
import { LISTING_FIELDS } from '../listing/schema.js';
import { MappingConfig } from '../mapping/config-schema.js';
import { PRESETS } from '../mapping/presets/registry.js';

export const ApiConfig = z.strictObject({
  baseUrl: z
    .union([z.literal('embedded'), z.string().url()])
    .describe('service base URL, or "embedded" to start the local emulator in-process'),
  secretKey: z.string().min(1).describe('Authorization header (edit, message, create, update, delete)'),
  sessionKey: z.string().min(1).describe('chatrobot-sessionkey header (list)'),
  concurrency: z.number().int().min(1).max(256).default(8).describe('API calls in flight at once'),
  ratePerSecond: z.number().positive().default(20).describe('client-side token bucket'),
  timeoutMs: z.number().int().positive().default(30_000).describe('total deadline of one API call attempt, response body included'),
  maxResponseBytes: z
    .number()
    .int()
    .positive()
    .default(8 * 1024 * 1024)
    .describe('most bytes of one API response body; a larger one fails the call'),
  retries: z.number().int().min(0).default(4).describe('retries on network errors, 5xx, 408, 429'),
  pageSize: z.number().int().min(1).default(100).describe('PageSize asked of RealEstateList'),
});
export type ApiConfig = z.infer<typeof ApiConfig>;

export const RedisConfig = z.strictObject({
  url: z.string().default('redis://127.0.0.1:6379'),
  prefix: z.string().default('feedsync').describe('prefix of every Redis key (queues and state)'),
});

export const SmokeConfig = z.strictObject({
  sessionId: z.number().int(),
  message: z.string().min(1),
  stream: z.boolean().default(true).describe('also check the streamed form'),
});

export const ChatbotConfig = z.strictObject({
  serialNumber: z.string().min(1),
  settings: ChatbotSettings.optional(),
  smoke: SmokeConfig.optional(),
  schedule: z
    .strictObject({ settings: z.string().optional(), smoke: z.string().optional(), tz: z.string().optional() })
    .optional()
    .describe('cron patterns for the settings push and the smoke job'),
});
export type ChatbotConfig = z.infer<typeof ChatbotConfig>;

const listingField = z.enum(LISTING_FIELDS as [string, ...string[]]);

export const DeletesConfig = z.strictObject({
  mode: z.enum(['mirror', 'keep']).default('mirror'),
  maxFraction: z.number().min(0).max(1).default(0.25).describe('most of the remote listings one run may delete'),
  maxCount: z.number().int().min(0).default(500),
  graceHours: z.number().min(0).default(0).describe('delete only after missing from the feed this long'),
  batchSize: z.number().int().min(1).max(1000).default(100),
});
export type DeletesConfig = z.infer<typeof DeletesConfig>;

export const ScheduleConfig = z.strictObject({
  cron: z.string().min(1),
  tz: z.string().optional(),
});

/** A feed without its own `ignore` takes its preset's derived fields (DaysOnMarket): `ignore: []` turns that off. */
function presetIgnore(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || 'ignore' in raw) return raw;
  const preset = (raw as { mapping?: { preset?: unknown } }).mapping?.preset;
  const fields = typeof preset === 'string' && Object.hasOwn(PRESETS, preset) ? PRESETS[preset as keyof typeof PRESETS].ignore : undefined;
  return fields?.length ? { ...raw, ignore: fields } : raw;
}

export const FeedConfig = z.preprocess(presetIgnore, z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ - only'),
  chatbot: z.string().min(1).describe('serialNumber of the chatbot the listings belong to'),
  keyBy: z.enum(['MLSNumber', 'URL']).default('MLSNumber'),
  source: FeedSource,
  mapping: MappingConfig.prefault({}),
  deletes: DeletesConfig.prefault({}),
  ignore: z.array(listingField).default([]).describe("fields that alone never cause an update (default: the preset's derived fields, e.g. DaysOnMarket)"),
  schedule: ScheduleConfig.optional(),
}));
export type FeedConfig = z.infer<typeof FeedConfig>;

export const Config = z
  .strictObject({
    api: ApiConfig,
    redis: RedisConfig.optional(),
    chatbots: z.array(ChatbotConfig).default([]),
    feeds: z.array(FeedConfig).default([]),
    worker: z
      .strictObject({
        port: z.number().int().min(0).max(65535).default(9464),
        historySize: z.number().int().min(1).default(50),
        watchdogSeconds: z.number().int().positive().default(300),
        shutdownTimeoutMs: z.number().int().positive().default(30_000),
        concurrency: z.number().int().min(1).max(64).default(2).describe('jobs of one queue a worker process runs at once'),
        lockDurationMs: z.number().int().positive().default(30_000).describe('BullMQ job lock; a dead worker\'s job is recovered after it'),
        stalledIntervalMs: z.number().int().positive().default(30_000).describe('how often workers look for stalled jobs'),
      })
      .prefault({}),
    state: z.strictObject({ file: z.string().optional() }).optional().describe('state file when no redis'),
  })
  .superRefine((cfg, ctx) => {
    const names = new Set<string>();
    cfg.feeds.forEach((f, i) => {
      if (names.has(f.name)) ctx.addIssue({ code: 'custom', path: ['feeds', i, 'name'], message: `duplicate feed name ${f.name}` });
      names.add(f.name);
    });
    const sns = new Set<string>();
    cfg.chatbots.forEach((c, i) => {
      if (sns.has(c.serialNumber)) ctx.addIssue({ code: 'custom', path: ['chatbots', i, 'serialNumber'], message: `duplicate chatbot ${c.serialNumber}` });
      sns.add(c.serialNumber);
      if (c.smoke) {
        const r = AskRequest.safeParse({ sessionID: c.smoke.sessionId, content: c.smoke.message });
        if (!r.success) ctx.addIssue({ code: 'custom', path: ['chatbots', i, 'smoke'], message: r.error.issues[0]?.message ?? 'invalid' });
      }
    });
  });
export type Config = z.infer<typeof Config>;

/** A loaded config with where it came from: relative feed paths resolve against `dir`. */
export interface LoadedConfig {
  config: Config;
  file: string;
  dir: string;
}
