// `alerts:` in feedsync.yaml: where alerts go (channels) and when they fire (rules, each with a default).
import { z } from 'zod';

const Webhook = z.strictObject({
  kind: z.literal('webhook'),
  url: z.string().url(),
  /** signs the body: X-Feedsync-Signature: sha256=<hex HMAC-SHA256 of "<X-Feedsync-Timestamp>.<body>"> */
  secret: z
    .string()
    .min(8)
    .describe('HMAC-SHA256 key of the X-Feedsync-Signature header (signs X-Feedsync-Timestamp and the body)'),
});

const Slack = z.strictObject({
  kind: z.literal('slack'),
  url: z.string().url().describe('a Slack-compatible incoming webhook URL'),
});

const Email = z.strictObject({
  kind: z.literal('email'),
  smtp: z.strictObject({
    host: z.string().min(1),
    port: z.number().int().min(1).max(65535).default(587),
    secure: z
      .boolean()
      .default(false)
      .describe('TLS from the start (port 465); otherwise STARTTLS, required when user is set'),
    user: z.string().optional(),
    pass: z.string().optional(),
  }),
  from: z.string().min(3),
  to: z.array(z.string().min(3)).min(1),
});

export const AlertChannel = z.discriminatedUnion('kind', [Webhook, Slack, Email]);
export type AlertChannel = z.infer<typeof AlertChannel>;

export const AlertRules = z.strictObject({
  guard: z.boolean().default(true).describe('a delete guard tripped'),
  failedRuns: z.number().int().min(1).default(3).describe('runs in a row that failed or found the service unavailable'),
  rejectedFraction: z.number().min(0).max(1).default(0.1).describe('rejected records above this fraction of the feed'),
  feedRejected: z
    .boolean()
    .default(true)
    .describe(
      "a run ended rejected: the feed's answer is not the feed (a mapped column missing, an HTML page) or too few of its records are valid (feeds[].minValidFraction)",
    ),
  validDropFraction: z
    .number()
    .min(0)
    .max(1)
    .default(0.3)
    .describe('valid records fell by more than this against the last good run'),
  staleHours: z.number().positive().default(36).describe('no successful sync for this long'),
  unmappedValues: z.boolean().default(true).describe('lookup values that no map covers appeared'),
  chatCheck: z.boolean().default(true).describe('the chat check found listings the chatbot cannot answer about'),
  sourceDrift: z
    .boolean()
    .default(true)
    .describe(
      "the daily dictionary check (feed drift) found a source's fields or lookups moved away from the feed's mapping",
    ),
  // a flapping feed (bad, good, bad...) would otherwise alert and resolve on every run
  openAfterRuns: z.number().int().min(1).default(1).describe('runs in a row a condition must hold before it alerts'),
  closeAfterMinutes: z
    .number()
    .min(0)
    .default(60)
    .describe('an alert resolves once its condition has stayed clear this long'),
});
export type AlertRules = z.infer<typeof AlertRules>;

export const AlertsConfig = z.strictObject({
  channels: z.array(AlertChannel).default([]),
  rules: AlertRules.prefault({}),
});
export type AlertsConfig = z.infer<typeof AlertsConfig>;
