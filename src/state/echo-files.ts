// The page echo's generations (sync/remote/page-echo.ts) in files, one per chatbot and row options, so a
// process that pages once and exits (`feedsync sync` from cron) starts where the last one ended.
// A cache: a file that cannot be read or written costs the next paging its speed, nothing else, so
// failures are logged as warnings and the run goes on. Files are replaced atomically; files not
// read or written for STALE_DAYS (a chatbot no longer synced) are removed when another is written.
import { hash } from 'node:crypto';
import { readdir, readFile, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { PRIVATE_FILE_MODE, privateDir } from './private-files.js';

const STALE_DAYS = 14;

export interface EchoFileStore {
  read(name: string): Promise<Uint8Array | undefined>;
  /** queues the write and returns: the paging that asks it is not held up by the disk (settled() waits) */
  write(name: string, bytes: Uint8Array): Promise<void>;
  /** the queued writes are done (a process awaits it before it exits) */
  settled(): Promise<void>;
}

export function createEchoFiles(dir: string, logger: Logger): EchoFileStore {
  const fileOf = (name: string) => join(dir, `${hash('sha1', name, 'hex')}.echo`);
  /** the writes queued, one after another (they never reject: a failure is logged) */
  let queue: Promise<void> = Promise.resolve();
  return {
    settled: () => queue,
    async read(name) {
      const file = fileOf(name);
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
          logger.warn({ err, file }, 'the page echo file could not be read: this paging decodes every page');
        return undefined;
      }
      // in use: not stale (a generation unchanged since is not written again); a file that cannot be
      // touched is still read
      const now = new Date();
      await utimes(file, now, now).catch((err: unknown) =>
        logger.warn(
          { err, file },
          `the page echo file could not be touched: it may be removed as unused after ${STALE_DAYS} days`,
        ),
      );
      return bytes;
    },
    async write(name, bytes) {
      queue = queue.then(async () => {
        // (loaded by the first write: a rerun whose echo is unchanged writes none; a package that
        // cannot be loaded fails the queue, and the command with it, rather than being warned about)
        const { default: writeFileAtomic } = await import('write-file-atomic');
        try {
          privateDir(dir, 'The folder of the page echo'); // 0700, its files 0600 (private-files.ts)
          // no fsync: a file cut short by a crash fails its checksum and is ignored
          await writeFileAtomic(fileOf(name), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
            fsync: false,
            mode: PRIVATE_FILE_MODE,
          });
          await removeStale(dir, Date.now() - STALE_DAYS * 86_400_000);
        } catch (err) {
          logger.warn({ err, dir }, 'the page echo file could not be written: the next run decodes every page');
        }
      });
    },
  };
}

async function removeStale(dir: string, before: number): Promise<void> {
  for (const f of await readdir(dir)) {
    if (!f.endsWith('.echo')) continue;
    const file = join(dir, f);
    if ((await stat(file)).mtimeMs < before) await rm(file, { force: true });
  }
}
