// `feedsync init`: writes a commented starter config (and a three-listing sample CSV it reads) that
// works as it is against the embedded emulator, so `feedsync sync` right after shows a whole run.
// Never overwrites a file unless --force, and never writes through a symbolic link (a link planted
// where the config or the sample feed goes would have init write wherever it points): each file is
// opened with exclusive create (O_EXCL), or with --force O_NOFOLLOW, and a linked folder is refused.
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { EXIT } from './exit.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface InitOptions {
  config: string;
  force?: boolean;
}

const TEMPLATES = new URL('./templates/', import.meta.url);

export async function run(opts: InitOptions): Promise<number> {
  const file = resolve(opts.config);
  const feedFile = join(dirname(file), 'feeds', 'listings.csv');
  if (existsSync(file) && !opts.force) {
    throw new ConfigError(`${file} exists already; give another --config path, or --force to overwrite it`, file);
  }
  await mkdir(dirname(file), { recursive: true });
  await writeNew(file, await readFile(new URL('starter.yaml', TEMPLATES), 'utf8'), Boolean(opts.force));
  const wrote = [file];
  // The sample feed is written only when missing: a feed of your own is never replaced.
  if (!(await linkOrFile(feedFile))) {
    await refuseLink(dirname(feedFile));
    await mkdir(dirname(feedFile), { recursive: true });
    await writeNew(feedFile, await readFile(new URL('listings.csv', TEMPLATES), 'utf8'), false);
    wrote.push(feedFile);
  }
  const rel = relative(process.cwd(), file) || file;
  const cfg = rel === 'feedsync.yaml' ? '' : ` --config ${rel}`;
  process.stderr.write(
    [
      ...wrote.map((f) => `wrote ${relative(process.cwd(), f) || f}`),
      '',
      'next:',
      `  ${feedsyncCommand()} config check${cfg}`,
      `  ${feedsyncCommand()} feed preview${cfg} --feed my-feed`,
      `  ${feedsyncCommand()} sync${cfg} --dry-run`,
      `  ${feedsyncCommand()} sync${cfg}`,
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}

/** Whether anything is at `path`, a dangling link included (existsSync follows links). */
async function linkOrFile(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

async function refuseLink(path: string): Promise<void> {
  // (nothing there, or nothing lstat can see: the write that follows says its own failure)
  const st = await lstat(path).catch(() => undefined);
  if (st?.isSymbolicLink())
    throw new ConfigError(
      `${path} is a symbolic link; feedsync init does not write through links: remove it or choose another --config path`,
      path,
    );
}

/** Write `text` to a new file (O_EXCL), or with `force` over a regular file (O_NOFOLLOW): never through a link. */
async function writeNew(path: string, text: string, force: boolean): Promise<void> {
  await refuseLink(path);
  const flags =
    constants.O_WRONLY | constants.O_CREAT | (force ? constants.O_TRUNC | constants.O_NOFOLLOW : constants.O_EXCL);
  let fh;
  try {
    fh = await open(path, flags, 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP')
      throw new ConfigError(
        `${path} appeared meanwhile or is a link; feedsync init writes only new files (or --force over a regular file)`,
        path,
      );
    throw err;
  }
  try {
    await fh.writeFile(text);
  } finally {
    await fh.close();
  }
}
