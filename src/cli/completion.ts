// `feedsync completion bash|zsh`: a completion script for the shell, made from the command tree
// itself (every command, subcommand and option cli.ts defines), so it never lists a command that
// is gone or misses one that was added. Completes command words and options; anything else (a
// config file, a feed name) falls back to the shell's file names.
import type { Command } from 'commander';
import { EXIT, type ExitStatus } from './exit.js';

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

/** Each command path (`''`, `feed`, `feed preview`) and the words that may follow it there. */
export function completionTable(program: Command): Map<string, string[]> {
  const table = new Map<string, string[]>();
  const walk = (cmd: Command, path: string[]) => {
    const subs = cmd.commands.map((c) => c.name());
    const options = cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined));
    table.set(path.join(' '), [...subs, ...options, '--help']);
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return table;
}

/** The script for `shell`: source it, or `eval "$(feedsync completion bash)"` in ~/.bashrc (zsh: ~/.zshrc). */
export function completionScript(program: Command, shell: Shell): string {
  const table = completionTable(program);
  const paths = [...table.keys()].filter((p) => p !== '');
  // a word moves the path on only where it names a subcommand of the path so far
  const step = paths.map((p) => `"/${p.replace(/ /g, '/')}"`).join('|');
  const cases = [...table]
    .map(([p, words]) => `    "${p === '' ? '' : '/' + p.replace(/ /g, '/')}") cands="${words.join(' ')}" ;;`)
    .join('\n');
  const walk = (first: string, last: string, word: string) =>
    [
      `  local key="" w i cands=""`,
      `  for ((i = ${first}; i < ${last}; i++)); do`,
      `    w="${word}"`,
      `    case "$key/$w" in`,
      `      ${step}) key="$key/$w" ;;`,
      `    esac`,
      `  done`,
      `  case "$key" in`,
      cases,
      `  esac`,
    ].join('\n');
  if (shell === 'bash')
    return [
      `# feedsync completion for bash: eval "$(feedsync completion bash)" in ~/.bashrc`,
      `_feedsync() {`,
      walk('1', '$COMP_CWORD', '${COMP_WORDS[i]}'),
      `  COMPREPLY=($(compgen -W "$cands" -- "\${COMP_WORDS[COMP_CWORD]}"))`,
      `}`,
      `complete -o default -F _feedsync feedsync`,
      '',
    ].join('\n');
  return [
    `#compdef feedsync`,
    `# feedsync completion for zsh: eval "$(feedsync completion zsh)" in ~/.zshrc after compinit,`,
    `# or save it as _feedsync in a folder of $fpath`,
    `_feedsync() {`,
    walk('2', '$CURRENT', '${words[i]}'),
    `  compadd -- \${=cands}`,
    `  _files`,
    `}`,
    `if [ "$funcstack[1]" = "_feedsync" ]; then _feedsync "$@"; else compdef _feedsync feedsync; fi`,
    '',
  ].join('\n');
}

export async function run(opts: { shell: Shell; program: Command }): Promise<ExitStatus> {
  process.stdout.write(completionScript(opts.program, opts.shell));
  return EXIT.ok;
}
