// Where the browser tests find a Chromium, and whether they run. `npm test` on a machine without one
// skips them, saying in one line how to run them (test/setup/preflight.ts prints it); CI sets
// FEEDSYNC_REQUIRE_BROWSER=1 (.ci/run), and so does a CHROMIUM_PATH someone set: then a missing
// Chromium fails the browser tests instead of skipping them.
import { existsSync } from 'node:fs';

/** Debian's package, then the name other distributions give it. */
const WELL_KNOWN = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export interface BrowserPlan {
  /** the Chromium to drive (CHROMIUM_PATH as given, else the first well-known one found, else Debian's) */
  path: string;
  /** false: the browser tests are skipped */
  run: boolean;
  /** with run false: the one line `npm test` prints */
  skipped?: string;
}

export function browserPlan(
  env: NodeJS.ProcessEnv = process.env,
  exists: (p: string) => boolean = existsSync,
): BrowserPlan {
  if (env.CHROMIUM_PATH) return { path: env.CHROMIUM_PATH, run: true };
  const found = WELL_KNOWN.find((p) => exists(p));
  if (found) return { path: found, run: true };
  const path = WELL_KNOWN[0]!;
  if (env.FEEDSYNC_REQUIRE_BROWSER === '1') return { path, run: true };
  return {
    path,
    run: false,
    skipped:
      `browser tests (test/browser/) skipped: no Chromium at ${WELL_KNOWN.join(' or ')}; ` +
      'to run them, `apt-get install chromium` or set CHROMIUM_PATH (FEEDSYNC_REQUIRE_BROWSER=1 makes a missing Chromium a failure)',
  };
}
