// The browser tests drive Debian's Chromium through playwright-core (no browser download). Without
// one they are skipped (find-chromium.ts); where they must run and it is missing, they stop at once,
// saying what is missing and how to get it.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { browserPlan } from './find-chromium.js';

const plan = browserPlan();
export const CHROMIUM = plan.path;
/** false where no Chromium is found and none is required: `describe.skipIf(!BROWSER_TESTS_RUN)` */
export const BROWSER_TESTS_RUN = plan.run;
/** Screenshots kept as test artifacts (git-ignored). */
export const ARTIFACTS = process.env.SCREENSHOT_DIR ?? fileURLToPath(new URL('../artifacts', import.meta.url));

export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install chromium\` (.ci/run does), or set CHROMIUM_PATH`,
    );
  }
}

export async function launchChromium(): Promise<Browser> {
  requireChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
