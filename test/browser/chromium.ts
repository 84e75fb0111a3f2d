// The browser tests drive Debian's Chromium through playwright-core (no browser download). Without
// it they stop at once, saying what is missing and how to get it.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
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
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
