// The servers of a media mirror test file (the emulator, a local S3 server, a photo host), started
// once for the file and closed after it, and the media config that points the mirror at them.
import { afterAll, beforeAll } from 'vitest';
import { MediaConfig } from '../../src/media/index.js';
import { startTestEmulator, type TestEmulator } from './emulator.js';
import { startPhotoHost, type PhotoHost } from './photo-host.js';
import { startS3Server, type TestS3 } from './s3-server.js';

export interface MirrorServers {
  te: TestEmulator;
  s3: TestS3;
  host: PhotoHost;
}

/** The file's servers (inside a test: started by its beforeAll hook). */
export function useMirrorServers(): () => MirrorServers {
  let servers: MirrorServers | undefined;
  beforeAll(async () => {
    const [te, s3, host] = await Promise.all([startTestEmulator(), startS3Server(), startPhotoHost()]);
    servers = { te, s3, host };
  });
  afterAll(async () => {
    if (servers) await Promise.all([servers.te.close(), servers.s3.close(), servers.host.close()]);
  });
  return () => {
    if (!servers) throw new Error('the mirror servers are started by the vitest hooks: use them inside a test');
    return servers;
  };
}

/** media.mirror into the test S3 server's bucket under `listings/`, public at `publicBaseUrl`; `patch` over it. */
export function mirrorMediaConfig(s3: TestS3, publicBaseUrl: string, patch: Record<string, unknown> = {}): MediaConfig {
  return MediaConfig.parse({
    mirror: {
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: s3.bucket,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
      publicBaseUrl,
      prefix: 'listings/',
    },
    maxBytes: 1024 * 1024,
    timeoutMs: 1500,
    ...patch,
  });
}
