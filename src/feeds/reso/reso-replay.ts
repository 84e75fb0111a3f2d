// Saved RESO pages, replayed: a JSON file holding one OData page or an array of pages, or a folder
// of page files (read in name order).
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { causeMessage, FeedReadError } from '../../errors.js';
import { checkPage } from './reso-pages.js';
import { feedPath } from '../source/source.js';
import type { FeedContext } from '../types.js';

export async function* replayPages(
  path: string,
  ctx: Pick<FeedContext, 'baseDir'>,
  label: string,
  maxRecords: number,
): AsyncIterable<unknown[]> {
  const full = feedPath(ctx, path);
  let files: string[];
  try {
    files = (await stat(full)).isDirectory()
      ? (await readdir(full))
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => join(full, f))
      : [full];
  } catch (err) {
    throw new FeedReadError(
      `cannot open the saved RESO pages (${full}): ${causeMessage(err)}`,
      { file: label },
      false,
      { cause: err },
    );
  }
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new FeedReadError(`saved RESO pages are not JSON: ${causeMessage(err)}`, { file }, false, { cause: err });
    }
    const pages = Array.isArray(json) ? json : [json];
    for (let i = 0; i < pages.length; i++)
      yield checkPage(pages[i], { file, record: `page ${i + 1}` }, maxRecords).value;
  }
}
