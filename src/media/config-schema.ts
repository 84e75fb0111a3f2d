// The `media` part of the config (docs/media.md): where listing photos are mirrored to (any
// S3-compatible bucket) and the bounds of the photo downloads; `feeds[].media` turns it off for a feed.
import { z } from 'zod';
import { allowanceEntryError } from './address-guard.js';

export const MEDIA_DEFAULTS = {
  maxBytes: 25 * 1024 ** 2,
  timeoutMs: 60_000,
  graceHours: 72,
  deleteBatchSize: 1000,
  concurrency: 4,
} as const;

export const MediaMirrorConfig = z.strictObject({
  endpoint: z
    .string()
    .url()
    .optional()
    .describe('S3 API endpoint of an S3-compatible store (R2, MinIO, B2); none: AWS S3 of `region`'),
  region: z.string().min(1).describe('bucket region (R2: auto)'),
  bucket: z.string().min(1),
  accessKeyId: z.string().min(1).describe('use ${ENV}; masked in every output'),
  secretAccessKey: z.string().min(1).describe('use ${ENV}; masked in every output'),
  forcePathStyle: z
    .boolean()
    .default(false)
    .describe('bucket in the path instead of the host name (MinIO and most self-hosted stores)'),
  publicBaseUrl: z
    .string()
    .url()
    .describe("where the bucket's objects are served to people: Images become <publicBaseUrl>/<key>"),
  prefix: z
    .string()
    .regex(/^([A-Za-z0-9._-]+\/)*$/, 'folders ending in "/", letters, digits, . _ - only (e.g. photos/)')
    .optional()
    .describe('key prefix of every object (a folder of the bucket, ending in /)'),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(MEDIA_DEFAULTS.concurrency)
    .describe('photos downloaded and uploaded at once, per feed run'),
});
export type MediaMirrorConfig = z.infer<typeof MediaMirrorConfig>;

export const MediaConfig = z.strictObject({
  mirror: MediaMirrorConfig.optional().describe(
    "mirror every feed's photos to this bucket (feeds[].media.mirror: false leaves a feed out)",
  ),
  maxBytes: z
    .number()
    .int()
    .positive()
    .max(1024 ** 3)
    .default(MEDIA_DEFAULTS.maxBytes)
    .describe('most bytes of one photo; a larger one is left out'),
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(MEDIA_DEFAULTS.timeoutMs)
    .describe('total deadline of one photo download, body included'),
  graceHours: z
    .number()
    .min(0)
    .max(24 * 366)
    .default(MEDIA_DEFAULTS.graceHours)
    .describe('an object no listing uses is deleted after this long'),
  deleteBatchSize: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(MEDIA_DEFAULTS.deleteBatchSize)
    .describe('objects per DeleteObjects request'),
});
export type MediaConfig = z.infer<typeof MediaConfig>;

export const FeedMediaConfig = z.strictObject({
  mirror: z
    .boolean()
    .default(true)
    .describe("false: this feed's photos keep their source URLs even when media.mirror is set"),
  allowInternal: z
    .array(
      z.string().superRefine((entry, ctx) => {
        const why = allowanceEntryError(entry);
        if (why) ctx.addIssue({ code: 'custom', message: why });
      }),
    )
    .default([])
    .describe(
      'photo hosts (names) or address ranges (CIDR) that are not public but may be downloaded from: an internal photo host; every other internal address is refused',
    ),
});
export type FeedMediaConfig = z.infer<typeof FeedMediaConfig>;
