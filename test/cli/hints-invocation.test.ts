// Hints name the command the way feedsync was started (format/invocation.ts), never a bare
// `feedsync` that a clone's shell does not have (README: `npx feedsync`).
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

vi.mock('../../src/format/invocation.js', () => ({ feedsyncCommand: () => 'npx feedsync' }));

const { nextPulls } = await import('../../src/undo/report.js');
const { answerChecks } = await import('../../src/smoke/checks.js');

describe('hints name feedsync as it was started', () => {
  it("undo's next full pull", () => {
    expect(nextPulls(3, { mark: undefined }, undefined).full).toContain('(npx feedsync sync --full, or schedule.full)');
  });

  it("the smoke check's missing suffix", () => {
    const [, suffix] = answerChecks('ask', { content: 'hello', tokens: 1 } as never, '[SN]');
    expect(suffix!.detail).toContain('push the settings (npx feedsync settings)');
  });

  // the hints the tests above do not reach (state files, a held lock, the run history, a pause)
  it.each([
    'src/state/legacy-state.ts',
    'src/state/former-keys.ts',
    'src/smoke/checks.ts',
    'src/runs/foreground.ts',
    'src/undo/report.ts',
    'src/queue/run-prepare.ts',
  ])('%s writes no bare feedsync command', (file) => {
    const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
    const bare = text
      .split('\n')
      .filter((l) => !/^\s*(\/\/|\*|\/\*\*)/.test(l))
      .filter((l) => /[(`]feedsync (state|sync|settings|runs|resume|pause)\b/.test(l));
    expect(bare).toEqual([]);
  });
});
