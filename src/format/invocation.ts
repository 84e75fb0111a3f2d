// How a person runs feedsync where this process runs, for the commands the CLI prints as hints
// ("changes: feedsync runs show RUN"): a hint must work when pasted into the person's shell.
// Started through npm (`npx feedsync`, `npm start`), the PATH is npm's (it adds node_modules/.bin),
// not the shell's: `npx feedsync` again. Installed globally, `feedsync` on PATH is this script. In a
// clone it is on no PATH (npm links a package's own bin nowhere) and README's way is `npx feedsync`;
// elsewhere, node and the script.
import { realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';

export interface InvocationFacts {
  /** the script node runs (process.argv[1]) */
  script: string;
  cwd: string;
  /** the PATH variable */
  path: string;
  /** npm's npm_command variable: set when npm (npx, npm start) started this process */
  npmCommand: string | undefined;
  /** the real path of a file, or undefined when there is none */
  realFile(path: string): string | undefined;
}

/** The command prefix that runs this feedsync: `feedsync`, `npx feedsync` or `node PATH`. */
export function invocationOf(facts: InvocationFacts): string {
  if (facts.npmCommand) return 'npx feedsync';
  const script = facts.realFile(facts.script);
  if (script === undefined) return 'feedsync';
  const onPath = facts.path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => facts.realFile(join(dir, 'feedsync')) === script);
  if (onPath) return 'feedsync';
  // bin/feedsync.js of the package whose folder the person stands in (a clone)
  const packageDir = dirname(dirname(script));
  if (facts.realFile(join(facts.cwd, 'package.json')) === join(packageDir, 'package.json')) return 'npx feedsync';
  const rel = relative(facts.cwd, script);
  const shown = rel.startsWith('..') ? script : rel;
  return `node ${/\s/.test(shown) ? JSON.stringify(shown) : shown}`;
}

function realFile(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? realpathSync(path) : undefined;
  } catch {
    return undefined; // (gone or unreadable: the path is shown as given)
  }
}

let known: string | undefined;

/** This process's invocationOf, looked up once (only a hint needs it). */
export function feedsyncCommand(): string {
  known ??= invocationOf({
    script: process.argv[1] ?? '',
    cwd: process.cwd(),
    path: process.env.PATH ?? '',
    npmCommand: process.env.npm_command,
    realFile,
  });
  return known;
}
