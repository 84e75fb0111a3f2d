// The bucket photos are mirrored to: any S3-compatible store, through the AWS SDK v3 (its multipart
// Upload for large objects). The SDK is loaded only when a run has something to store or delete, so
// a config without media.mirror (and a no-change rerun) never loads it. Checksums are sent only where
// the S3 API requires them: several S3-compatible stores refuse the SDK's newer default trailers.
import type { S3Client } from '@aws-sdk/client-s3';
import { causeMessage } from '../errors.js';
import { maskSecrets, registerSecret } from '../secrets.js';
import type { MediaMirrorConfig } from './config-schema.js';

export interface MediaStorage {
  /** stores one object (one photo held in memory per slot; multipart above PART_BYTES) */
  put(key: string, body: Buffer, contentType: string, signal?: AbortSignal): Promise<void>;
  /** deletes up to 1000 keys in one request; the keys it could not delete come back with why */
  deleteBatch(keys: readonly string[]): Promise<Array<{ key: string; reason: string }>>;
  close(): void;
}

/** Served for a year and never revalidated: an object's key is its content's hash, so it never changes. */
const CACHE_CONTROL = 'public, max-age=31536000, immutable';
const PART_BYTES = 8 * 1024 * 1024;
/** total deadline of one S3 request (the SDK's per-attempt socket timeout) */
const REQUEST_TIMEOUT_MS = 60_000;

export function storageIdentity(cfg: MediaMirrorConfig): string {
  return JSON.stringify([cfg.endpoint ?? `aws:${cfg.region}`, cfg.bucket, cfg.prefix ?? '']);
}

export async function openStorage(cfg: MediaMirrorConfig): Promise<MediaStorage> {
  registerSecret(cfg.accessKeyId);
  registerSecret(cfg.secretAccessKey);
  // The SDK warns on Node 20 that its releases after January 2027 want Node 22; the version
  // package.json pins runs on Node 20, and the warning would only alarm whoever reads stderr.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { S3Client: Client, DeleteObjectsCommand } = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const client: S3Client = new Client({
    region: cfg.region,
    ...(cfg.endpoint && { endpoint: cfg.endpoint }),
    forcePathStyle: cfg.forcePathStyle,
    credentials: { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 10_000, requestTimeout: REQUEST_TIMEOUT_MS },
  });
  return {
    async put(key, body, contentType, signal) {
      const upload = new Upload({
        client,
        params: {
          Bucket: cfg.bucket,
          Key: key,
          Body: body,
          ContentType: contentType,
          CacheControl: CACHE_CONTROL,
          ContentLength: body.length,
        },
        partSize: PART_BYTES,
        queueSize: 1,
        leavePartsOnError: false,
      });
      // (upload.done() below rejects with the abort, and that is the failure said: abort's own is not news)
      const abort = () => void upload.abort().catch(() => undefined);
      signal?.addEventListener('abort', abort, { once: true });
      try {
        await upload.done();
      } catch (err) {
        throw new Error(storageMessage(cfg, `PUT ${key}`, err), { cause: err });
      } finally {
        signal?.removeEventListener('abort', abort);
      }
    },
    async deleteBatch(keys) {
      if (keys.length === 0) return [];
      try {
        const out = await client.send(
          new DeleteObjectsCommand({
            Bucket: cfg.bucket,
            Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
          }),
        );
        return (out.Errors ?? []).map((e) => ({
          key: e.Key ?? '?',
          reason: maskSecrets(`${e.Code ?? 'error'}: ${e.Message ?? ''}`),
        }));
      } catch (err) {
        const reason = storageMessage(cfg, 'DeleteObjects', err);
        return keys.map((key) => ({ key, reason }));
      }
    },
    close: () => client.destroy(),
  };
}

function storageMessage(cfg: MediaMirrorConfig, what: string, err: unknown): string {
  const where = `${cfg.endpoint ? new URL(cfg.endpoint).origin : `AWS S3 ${cfg.region}`} bucket ${cfg.bucket}`;
  return maskSecrets(`storage ${where}: ${what} failed: ${causeMessage(err)}`);
}
