// A local S3-compatible server for tests: s3rver (npm devDependency; MinIO's server is a Go binary
// that neither npm nor Debian ship here). It listens on 127.0.0.1, a free port, keeps its objects in
// a temp folder, and is stopped with close(). It speaks the S3 API the AWS SDK v3 uses (path-style
// PUT, multipart upload, DeleteObjects, GET, ListObjectsV2). It checks that the access key id is one
// it knows (unknown: 403 InvalidAccessKeyId) but not SigV4 signatures, so the tests register their
// own key pair and never rely on the secret being checked.
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

export interface StoredObject {
  body: Buffer;
  contentType?: string;
  cacheControl?: string;
}

export interface TestS3 {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** every object of the bucket, read back over the S3 API */
  objects(): Promise<Map<string, StoredObject>>;
  keys(): Promise<string[]>;
  /** empties the bucket (between tests) */
  clear(): Promise<void>;
  close(): Promise<void>;
}

interface AccountRegistry {
  DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void };
}
const require = createRequire(import.meta.url);

export async function startS3Server(
  opts: { accessKeyId?: string; secretAccessKey?: string; bucket?: string } = {},
): Promise<TestS3> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'; // (see src/media/storage.ts)
  const bucket = opts.bucket ?? 'photos';
  const accessKeyId = opts.accessKeyId ?? 'AKIATESTPHOTOKEY0001';
  const secretAccessKey = opts.secretAccessKey ?? 'test-s3-secret-9f8e7d6c5b4a';
  // s3rver knows one account; the test's key pair joins it (its models are CommonJS)
  const account = require('s3rver/lib/models/account.js') as AccountRegistry;
  account.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const directory = await mkdtemp(join(tmpdir(), 'feedsync-s3-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const keys = async () => {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
      out.push(...(page.Contents ?? []).map((c) => c.Key!));
      token = page.NextContinuationToken;
    } while (token);
    return out.sort();
  };
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    keys,
    async objects() {
      const out = new Map<string, StoredObject>();
      for (const key of await keys()) {
        const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        out.set(key, {
          body: Buffer.from(await got.Body!.transformToByteArray()),
          ...(got.ContentType && { contentType: got.ContentType }),
          ...(got.CacheControl && { cacheControl: got.CacheControl }),
        });
      }
      return out;
    },
    async clear() {
      const all = await keys();
      if (all.length)
        await client.send(
          new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: all.map((Key) => ({ Key })), Quiet: true } }),
        );
    },
    async close() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
