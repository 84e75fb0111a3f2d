// When the browser tests run: a Chromium found runs them, none found skips them with one line saying
// how to run them, unless CI (FEEDSYNC_REQUIRE_BROWSER=1) or a CHROMIUM_PATH asks for them.
import { describe, expect, it } from 'vitest';
import { browserPlan } from './find-chromium.js';

const none = () => false;

describe('browserPlan', () => {
  it('runs them with the Chromium found, Debian’s first', () => {
    expect(browserPlan({}, (p) => p === '/usr/bin/chromium-browser')).toEqual({
      path: '/usr/bin/chromium-browser',
      run: true,
    });
    expect(browserPlan({}, () => true)).toEqual({ path: '/usr/bin/chromium', run: true });
  });

  it('skips them without one, in one line that says how to run them', () => {
    const plan = browserPlan({}, none);
    expect(plan.run).toBe(false);
    expect(plan.skipped).not.toContain('\n');
    expect(plan.skipped).toContain('apt-get install chromium');
    expect(plan.skipped).toContain('CHROMIUM_PATH');
  });

  it('runs them (and so fails them) without one where they are required or a path was given', () => {
    expect(browserPlan({ FEEDSYNC_REQUIRE_BROWSER: '1' }, none)).toEqual({ path: '/usr/bin/chromium', run: true });
    expect(browserPlan({ CHROMIUM_PATH: '/opt/chromium/chrome' }, none)).toEqual({
      path: '/opt/chromium/chrome',
      run: true,
    });
  });
});
