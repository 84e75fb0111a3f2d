// What a body is by its first characters, for a reader whose source answered with something else
// than the feed (the feed host's HTML error page saved as the CSV, an XML error document, JSON):
// the message names it and quotes its first line. Pure.
import { printable } from '../errors.js';

/** The body's first line as a message shows it: printable, at most 80 characters. */
export function firstLineOf(start: string): string {
  const line =
    start
      .replace(/^\uFEFF/, '')
      .trimStart()
      .split(/\r\n|\n|\r/, 1)[0] ?? '';
  return printable(line.length > 80 ? `${line.slice(0, 80)}…` : line);
}

/** What the start of a body is when it is markup or JSON: an HTML page, an XML document, JSON; undefined for anything else. */
export function bodyKind(start: string): 'an HTML page' | 'an XML document' | 'JSON' | undefined {
  const s = start.replace(/^\uFEFF/, '').trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype\s+html|<html[\s>])/i.test(s)) return 'an HTML page';
  if (/^<(\?xml|!doctype|[A-Za-z_])/i.test(s)) return 'an XML document';
  if (/^\{\s*("|\}|$)/.test(s) || /^\[\s*(\{|\[|"|-?\d|\]|true|false|null|$)/.test(s)) return 'JSON';
  return undefined;
}
