// Exit statuses: each outcome's status, the most serious of several, and the README's table is the
// one `--help` prints.
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { EXIT, EXIT_TABLE, exitForOutcome, exitHelp, printError, SEVERITY, worstExit } from '../../src/cli/exit.js';

describe('exit statuses', () => {
  it('maps each run outcome to its status', () => {
    // (`cancelled`: docs/runbook.md, "Cancel, pause, resume": an `enqueue --wait` on it exits 1)
    const outcomes = ['ok', 'partial', 'guard', 'rejected', 'failed', 'unavailable', 'aborted', 'cancelled', undefined];
    expect(outcomes.map(exitForOutcome)).toEqual([0, 4, 3, 6, 1, 1, 1, 1, 1]);
  });

  it('ends a command of several runs with the most serious status: 2, 1, 6, 4, 3, then 0', () => {
    expect(worstExit([])).toBe(EXIT.ok);
    expect(worstExit([0, 3, 0])).toBe(EXIT.guard);
    expect(worstExit([3, 4, 0])).toBe(EXIT.partial);
    expect(worstExit([4, 1, 3])).toBe(EXIT.failed);
    expect(worstExit([4, 6, 3])).toBe(EXIT.rejected);
    expect(worstExit([6, 1])).toBe(EXIT.failed);
    expect(worstExit([1, 2])).toBe(EXIT.usage);
    expect(worstExit([0, 99])).toBe(EXIT.failed); // a status it does not know is not taken for ok
  });

  it('documents every status once, in the README as in --help', () => {
    expect(EXIT_TABLE.map((e) => e.status).sort()).toEqual(Object.values(EXIT).sort());
    expect([...SEVERITY].sort()).toEqual(Object.values(EXIT).sort());
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const { status, meaning } of EXIT_TABLE) {
      expect(readme).toContain(`| ${status} | ${meaning} |`);
      expect(exitHelp()).toContain(`${status}  ${meaning}`);
    }
    expect(readme).toContain(`the order **${SEVERITY.join(', ')}**`);
  });

  it('prints an error of the operating system in words with what to do, never as a stack trace', () => {
    const err = Object.assign(new Error("EROFS: read-only file system, open '/srv/feedsync/changes.jsonl'"), {
      code: 'EROFS',
      syscall: 'open',
      path: '/srv/feedsync/changes.jsonl',
    });
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      printError(err);
      expect(String(write.mock.calls[0]?.[0])).toBe(
        "feedsync: /srv/feedsync/changes.jsonl is on a read-only file system (EROFS). Point the config at a writable place (in a container: a mounted volume). (EROFS: read-only file system, open '/srv/feedsync/changes.jsonl')\n",
      );
    } finally {
      write.mockRestore();
    }
  });

  it('prints a module missing from the installation in one line, not a stack (a lazy import after `npm ci` or a rebuild removed it)', async () => {
    const err = await import(/* @vite-ignore */ new URL('../../dist/bundle/chunk-GONE.js', import.meta.url).href).catch(
      (e: unknown) => e,
    );
    expect((err as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND');
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      printError(err);
      const printed = String(write.mock.calls[0]?.[0]);
      expect(printed).toMatch(
        /^feedsync: a module of this installation is missing \(.*chunk-GONE\.js.*\): it is incomplete or changed while it ran; in a clone `npm ci` reinstalls/,
      );
      expect(printed.split('\n')).toHaveLength(2); // one line and its end
    } finally {
      write.mockRestore();
    }
  });
});
