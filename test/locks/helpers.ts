// One feed of `keys` homes (homes.csv) into one chatbot of the emulator, in `dir`: the deployment the
// process tests of chatbot locks run `feedsync sync` on, with Redis (its lock in Redis) or without
// (lock files beside the state). Returns the config's path.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { REDIS_URL } from '../queue/helpers.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';

export async function writeHomesDeployment(
  dir: string,
  te: Pick<TestEmulator, 'url'>,
  opts: { chatbot: string; keys: number; redisPrefix?: string; lines?: string[] },
): Promise<string> {
  await writeFile(join(dir, 'homes.csv'), csv(rows(opts.keys, 1)));
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      `api: { baseUrl: "${te.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, concurrency: 2 }`,
      ...(opts.redisPrefix ? [`redis: { url: "${REDIS_URL}", prefix: ${opts.redisPrefix} }`] : []),
      ...(opts.lines ?? []),
      'feeds:',
      '  - name: homes',
      `    chatbot: ${opts.chatbot}`,
      '    source: { kind: csv, path: homes.csv }',
      `    mapping: { fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`,
    ].join('\n'),
  );
  return config;
}
