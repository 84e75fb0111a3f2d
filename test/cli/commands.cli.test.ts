// The command line as a person meets it: an unknown command is one line naming the closest one (not
// the whole help); `feedsync completion bash|zsh` completes every command and option the CLI has;
// and the README's command block lists every command and every option of each (read from the
// completion table, which is made from the command tree itself).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';

const root = join(import.meta.dirname, '../..');
let bash = '';
/** command path ('' the program, 'feed preview') → the words completed after it */
const table = new Map<string, string[]>();

beforeAll(async () => {
  const r = await feedsync(['completion', 'bash']);
  expect(r.code).toBe(0);
  bash = r.stdout;
  for (const m of bash.matchAll(/^ {4}"([^"]*)"\) cands="([^"]*)" ;;$/gm))
    table.set(m[1]!.replace(/\//g, ' ').trim(), m[2]!.split(' '));
});

describe('an unknown command', () => {
  it('is one line naming the closest command, exit 2, at the top and under a command', async () => {
    const top = await feedsync(['synk']);
    expect(top.code).toBe(2);
    expect(top.stdout).toBe('');
    expect(top.stderr).toBe(
      "feedsync: unknown command 'synk': did you mean `feedsync sync`? (`feedsync --help` lists them)\n",
    );
    const sub = await feedsync(['feed', 'prevue']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toBe(
      "feedsync: unknown command 'prevue': did you mean `feedsync feed preview`? (`feedsync feed --help` lists them)\n",
    );
    // words a person types for "what has run": not the nearest spelling (`state`), the command that answers
    for (const word of ['status', 'logs']) {
      const meant = await feedsync([word]);
      expect(meant.code).toBe(2);
      expect(meant.stderr).toBe(
        `feedsync: unknown command '${word}': did you mean \`feedsync runs\`? (\`feedsync --help\` lists them)\n`,
      );
    }
    const far = await feedsync(['zzzzzzzz']);
    expect(far.stderr).toBe("feedsync: unknown command 'zzzzzzzz' (`feedsync --help` lists them)\n");
  });
});

describe('the docs', () => {
  // (docs/failure-safety.md named `feedsync feed explain`, which never existed: `feed preview --key` is it)
  it('name only commands that exist: every `feedsync WORD [WORD]` in backticks in README.md, docs/ and fixtures/README.md', () => {
    const files = [
      'README.md',
      'fixtures/README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const subcommands = (path: string) => (table.get(path) ?? []).filter((w) => !w.startsWith('-'));
    const wrong: string[] = [];
    let named = 0;
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(/`(?:npx )?feedsync ([a-z][\w-]*)(?: ([a-z][\w-]*))?/g)) {
        named++;
        const [, first, second] = m;
        if (first === 'synk') continue; // README's example of a mistyped command
        const under = subcommands(first!);
        if (!subcommands('').includes(first!)) wrong.push(`${file}: feedsync ${first}`);
        else if (second !== undefined && under.length && !under.includes(second) && first !== 'runs')
          wrong.push(`${file}: feedsync ${first} ${second}`);
        else if (first === 'runs' && second !== undefined && second !== 'show')
          wrong.push(`${file}: feedsync runs ${second}`);
      }
    }
    expect(named).toBeGreaterThan(50);
    expect(wrong).toEqual([]);
  });
});

describe('the help', () => {
  // (it said "run history kept in Redis": a newcomer without Redis would not try it, and it works)
  it('says `runs` lists the runs without Redis too, as docs/contracts.md says', async () => {
    const r = await feedsync(['--help']);
    expect(r.code).toBe(0);
    const line = r.stdout.slice(r.stdout.indexOf('  runs [options]'), r.stdout.indexOf('  history [options]'));
    expect(line.replace(/\s+/g, ' ')).toContain('without Redis, those `sync` recorded beside the state file');
  });
});

describe('feedsync completion', () => {
  it('bash: completes commands, subcommands and options where they belong', async () => {
    expect([...table.keys()]).toEqual(
      expect.arrayContaining(['', 'sync', 'feed', 'feed preview', 'state export', 'completion']),
    );
    const complete = async (...words: string[]) => {
      const script = `${bash}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _feedsync; echo "\${COMPREPLY[*]}"`;
      return (await promisify(execFile)('bash', ['-c', script])).stdout.trim();
    };
    expect(await complete('feedsync', 'sy')).toBe('sync');
    expect(await complete('feedsync', 'feed', 'pr')).toBe('preview probe');
    expect(await complete('feedsync', 'sync', '--dry-run', '--re')).toBe('--reconcile');
    expect(await complete('feedsync', 'state', 'export', '--no')).toBe('--no-redis');
  });

  it('zsh: a script zsh reads, defining _feedsync for compdef', async () => {
    const r = await feedsync(['completion', 'zsh']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('#compdef feedsync');
    expect(r.stdout).toContain('compdef _feedsync feedsync');
    expect(r.stdout).toContain('"/feed/preview") cands="');
    const zsh = await promisify(execFile)('zsh', ['-n', '-c', r.stdout]).then(
      () => 'parsed',
      (e: { code?: unknown }) => (e.code === 'ENOENT' ? 'no zsh here' : `zsh -n failed: ${String(e)}`),
    );
    expect(['parsed', 'no zsh here']).toContain(zsh);
  });

  it('another shell is a usage error', async () => {
    const r = await feedsync(['completion', 'fish']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Allowed choices are bash, zsh');
  });
});

describe("the README's command block", () => {
  it('lists every command, and every option of each on its lines', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Command line'));
    const block = section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4));
    const lines = block.split('\n');
    const missing: string[] = [];
    for (const [path, words] of table) {
      if (path === '') continue;
      if (
        table.get(path)!.some((w) => !w.startsWith('-') && table.has(`${path} ${w}`)) &&
        !lines.some((l) => l.startsWith(`feedsync ${path} `))
      ) {
        // a command with subcommands is listed through them (`feedsync feed preview …`)
      } else if (!lines.some((l) => new RegExp(`^feedsync ${path}( |$)`).test(l.replace(/ {2,}/g, ' '))))
        missing.push(`feedsync ${path}`);
      // a command's lines: the ones naming it, and the indented ones that go on from them
      const own: string[] = [];
      for (const [i, l] of lines.entries()) {
        if (new RegExp(`^feedsync ${path}( |$)`).test(l.replace(/ {2,}/g, ' '))) {
          own.push(l);
          for (let j = i + 1; j < lines.length && /^\s/.test(lines[j]!); j++) own.push(lines[j]!);
        }
      }
      for (const option of words.filter((w) => w.startsWith('--') && w !== '--help' && w !== '--version'))
        if (own.length > 0 && !own.some((l) => new RegExp(`${option}(?![\\w-])`).test(l)))
          missing.push(`feedsync ${path} ${option}`);
    }
    expect(missing).toEqual([]);
  });
});
