// `feedsync init`: writes a commented starter config (and a three-listing sample CSV it reads) that
// works as it is against the embedded emulator, so `feedsync sync` right after shows a whole run.
// Never overwrites a file unless --force.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { EXIT } from './exit.js';

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
  await writeFile(file, await readFile(new URL('starter.yaml', TEMPLATES), 'utf8'));
  const wrote = [file];
  // The sample feed is written only when missing: a feed of your own is never replaced.
  if (!existsSync(feedFile)) {
    await mkdir(dirname(feedFile), { recursive: true });
    await writeFile(feedFile, await readFile(new URL('listings.csv', TEMPLATES), 'utf8'));
    wrote.push(feedFile);
  }
  const rel = relative(process.cwd(), file) || file;
  const cfg = rel === 'feedsync.yaml' ? '' : ` --config ${rel}`;
  process.stderr.write(
    [
      ...wrote.map((f) => `wrote ${relative(process.cwd(), f) || f}`),
      '',
      'next:',
      `  feedsync config check${cfg}`,
      `  feedsync feed preview${cfg} --feed my-feed`,
      `  feedsync sync${cfg} --dry-run`,
      `  feedsync sync${cfg}`,
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}
