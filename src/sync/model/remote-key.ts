// A chatbot's listing's key, by the field the feed keys by: how the paging (remote/remote-rows.ts)
// files a row and how a lost create is looked for (write/create-once.ts). Part of the row's code
// (remote/page-echo.ts ROWS_CODE): a change here makes the page echo's files stale.
import type { ListItem } from '../../listing/schema.js';
import type { KeyBy } from './plan-types.js';

export function remoteKey(item: Pick<ListItem, 'MLSNumber' | 'Url'>, keyBy: KeyBy): string {
  return (keyBy === 'URL' ? item.Url : item.MLSNumber).trim();
}
