import { printable } from '../errors.js';

/**
 * Left-aligned text columns for the report tables; the last column is not padded. Every cell is made
 * printable first: a feed's terminal escapes or bidi overrides never reach the terminal raw.
 */
export function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows].map((row) => row.map((cell) => printable(cell).replace(/[\r\n\t]+/g, ' ')));
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
