// A CSV file judged before its rows (docs/contracts.md, "rejected"): what it starts with when that is
// not CSV at all (an HTML page, JSON, XML: the feed host's error or login page saved as the file),
// and its header against the columns the mapping reads (mapping/columns-needed.ts). Each is one
// FeedReadError, `refused` (the run ends rejected), that names what is wrong: the file's first
// line, the missing column, the header's columns and the one it most likely became.
import { FeedReadError, printable } from '../../errors.js';
import { nearest } from '../../format/nearest.js';
import type { ColumnNeed } from '../types.js';
import { firstLineOf, bodyKind } from '../sniff.js';

/** Refuses a file that is not CSV by its first characters (before any row is parsed). */
export function refuseNotCsv(start: string, file: string): void {
  const kind = bodyKind(start);
  if (!kind) return;
  const hint = kind === 'an HTML page' ? " (the feed host's error or login page saved as the file?)" : '';
  throw new FeedReadError(
    `the file is ${kind}, not CSV: it starts \`${firstLineOf(start)}\`${hint}; none of its rows was read`,
    { file, line: 1 },
    false,
    { refused: true },
  );
}

const SHOWN_COLUMNS = 40;
const SHOWN_MISSING = 5;
const name = (column: string) => `\`${printable(column.length > 60 ? `${column.slice(0, 60)}…` : column)}\``;

/** Refuses a header that lacks a column the mapping reads: each missing one named, with the columns it has and the one it likely became. */
export function checkColumns(
  header: readonly string[],
  needs: readonly ColumnNeed[],
  file: string,
  start: string,
  delimiter: string,
): void {
  const has = new Set(header);
  const missing = needs.filter((n) => !n.anyOf.some((c) => has.has(c)));
  if (!missing.length) return;
  const read = new Set(needs.flatMap((n) => n.anyOf));
  const unread = header.filter((c) => !read.has(c));
  const cols = `${header.slice(0, SHOWN_COLUMNS).map(name).join(', ')}${header.length > SHOWN_COLUMNS ? `, and ${header.length - SHOWN_COLUMNS} more` : ''}`;
  const place = { file, line: 1 };
  if (missing.length === needs.length && needs.length > 1) {
    throw new FeedReadError(
      `none of the ${needs.length} columns the mapping reads is in the header (the file starts \`${firstLineOf(start)}\`); it has ${header.length} column(s): ${cols}${otherSeparator(header, needs, delimiter)}`,
      place,
      false,
      { refused: true },
    );
  }
  const each = missing.slice(0, SHOWN_MISSING).map((n) => {
    const likely = closest(n.anyOf[0]!, unread.length ? unread : header);
    return `${n.anyOf.map(name).join(' or ')} (read by ${n.usedBy}) is not in the header${likely ? `; the nearest it has is ${name(likely)}` : ''}`;
  });
  const more =
    missing.length > SHOWN_MISSING ? `; and ${missing.length - SHOWN_MISSING} more column(s) the mapping reads` : '';
  throw new FeedReadError(
    `${each.join('; ')}${more}. It has ${header.length} column(s): ${cols}. Map the new name (mapping.fields: from: [New, Old] reads either) or fix the export`,
    place,
    false,
    { refused: true },
  );
}

const SEPARATORS: ReadonlyArray<readonly [string, string, string]> = [
  [',', '`,`', '","'],
  [';', '`;`', '";"'],
  ['\t', 'a tab', '"\\t"'],
  ['|', '`|`', '"|"'],
];

/**
 * A header read as one column whose text splits, by another separator, into columns the mapping
 * reads: the file is separated by that one (a European export's `;`, a tab), said with the setting.
 */
function otherSeparator(header: readonly string[], needs: readonly ColumnNeed[], delimiter: string): string {
  if (header.length !== 1) return '';
  const read = new Set(needs.flatMap((n) => n.anyOf));
  const found = SEPARATORS.find(([sep]) => sep !== delimiter && header[0]!.split(sep).some((c) => read.has(c.trim())));
  if (!found) return '';
  const shown = SEPARATORS.find(([sep]) => sep === delimiter)?.[1] ?? `\`${delimiter}\``;
  return `. Its columns look separated by ${found[1]}, not ${shown}: set feeds[].source.delimiter: ${found[2]}`;
}

/** The column `wanted` most likely became: the longest shared start (3 characters or more), else the nearest by spelling, else one that holds it. */
function closest(wanted: string, columns: readonly string[]): string | undefined {
  const w = wanted.toLowerCase();
  let best: string | undefined;
  let bestShared = 2;
  for (const c of columns) {
    const l = c.toLowerCase();
    let i = 0;
    while (i < w.length && i < l.length && w[i] === l[i]) i++;
    if (i > bestShared) [best, bestShared] = [c, i];
  }
  return (
    best ??
    nearest(wanted, columns) ??
    columns.find((c) => c.toLowerCase().includes(w) || (c.length > 2 && w.includes(c.toLowerCase())))
  );
}
