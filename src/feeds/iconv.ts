// iconv-lite, imported by the first feed in another encoding than UTF-8 (a latin1 CSV, an XML feed
// declaring ISO-8859-1), not by every start of a command that reads feeds: bundled, its 550 KB of
// tables cost ~8 ms of CPU at each start, and most feeds are UTF-8.
import type iconvLite from 'iconv-lite';

let loaded: Promise<typeof iconvLite> | undefined;

/** iconv-lite, imported once. */
export function iconv(): Promise<typeof iconvLite> {
  return (loaded ??= import('iconv-lite').then((m) => m.default));
}
