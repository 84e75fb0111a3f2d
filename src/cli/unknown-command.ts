// An unknown command word is one line naming the closest command, not the whole help: `feedsync
// synk` → `feedsync: unknown command 'synk': did you mean `feedsync sync`? (`feedsync --help` lists
// them)`, exit 2. Hooked on every command that has subcommands (`feedsync feed prevue` too).
import { Command, CommanderError } from 'commander';
import { nearest } from '../format/nearest.js';
import { EXIT } from './exit.js';

/**
 * Words a person types for a command that has another name, by the command they sit under: the
 * command that answers, not the nearest spelling (`status` is nearest `state`, the state file's).
 */
const MEANT: Record<string, Record<string, string>> = {
  feedsync: { status: 'runs', logs: 'runs', log: 'runs' },
};

/** The one line for `word` where `parent` has no such subcommand. */
export function unknownCommandLine(parent: Command, word: string): string {
  const names = parent.commands.map((c) => c.name());
  const path = commandPath(parent);
  const near = Object.hasOwn(MEANT[path] ?? {}, word) ? MEANT[path]![word] : nearest(word, names);
  const hint = near === undefined ? '' : `: did you mean \`${path} ${near}\`?`;
  return `feedsync: unknown command '${word}'${hint} (\`${path} --help\` lists them)`;
}

/** On `program` and each of its commands with subcommands: an unknown word prints one line and ends with exit 2. */
export function sayUnknownCommands(program: Command): void {
  const hook = (cmd: Command) => {
    if (cmd.commands.length === 0) return;
    cmd.on('command:*', (operands: string[]) => {
      const line = unknownCommandLine(cmd, operands[0] ?? '');
      process.stderr.write(`${line}\n`);
      throw new CommanderError(EXIT.usage, 'commander.unknownCommand', line);
    });
    cmd.commands.forEach(hook);
  };
  hook(program);
}

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
