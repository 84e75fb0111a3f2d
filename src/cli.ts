// The `feedsync` command: parses arguments and calls one function per command (src/cli/*.ts).
// Command modules are imported when used, so `feedsync emulator` does not load BullMQ.
import { existsSync, readFileSync } from 'node:fs';
import { Argument, Command, CommanderError, InvalidArgumentError } from 'commander';
import { errorJson, EXIT, exitCodeFor, exitHelp, printError, printJson } from './cli/exit.js';
import { sayUnknownCommands } from './cli/unknown-command.js';
import { maskStream } from './secrets.js';

// The last line of defence: whatever a command prints (tables, --json, errors, stacks) passes the
// one masking function, so a registered secret never reaches the terminal or a log collector.
maskStream(process.stdout, 'text'); // stdout carries --json documents
maskStream(process.stderr);

// A reader that closed its end of the pipe (`feedsync --help | head -3`) wants no more output, and
// that is not the command's failure: Node ignores SIGPIPE, so the write is an 'error' event that,
// unhandled, ended the process with a stack, a sync in the middle of its writes with it. What is
// written after is dropped; the command runs to its end and exits with its own status. Any other
// error of the stream is thrown as before.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
  });
}

const version = packageVersion();

/** The package's version: cli.ts runs from src/ (tsx) or, built, from dist/src/. */
function packageVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    const url = new URL(path, import.meta.url);
    if (!existsSync(url)) continue;
    // (read by hand, not through zod: loading zod is a third of a bare start, and --version needs nothing else)
    const pkg: unknown = JSON.parse(readFileSync(url, 'utf8'));
    const v = pkg !== null && typeof pkg === 'object' && 'version' in pkg ? pkg.version : undefined;
    if (typeof v !== 'string') throw new Error(`${url.pathname}: no "version" string`);
    return v;
  }
  return 'unknown';
}

const program = new Command('feedsync')
  .description("Keeps a chatbot platform's real-estate listings in step with MLS and brokerage feeds")
  .version(version, '-V, --version', 'print the version')
  .enablePositionalOptions()
  .showHelpAfterError()
  .exitOverride()
  .addHelpText('after', `\n${exitHelp()}`);

const collect = (value: string, previous: string[] = []) => [...previous, value];
/**
 * The one rule of a whole-number option: decimal digits only (Number() reads '' as 0, '0x50' as 80 and
 * '1e3' as 1000), from `min` (0 or more) to `max`; else a usage error naming the range and `what` it is.
 */
const wholeIn =
  (min: number, max = Number.MAX_SAFE_INTEGER, what = 'a whole number') =>
  (value: string) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max)
      throw new InvalidArgumentError(
        `must be ${what}${max === Number.MAX_SAFE_INTEGER ? `, ${min} or more` : ` from ${min} to ${max}`}`,
      );
    return n;
  };
/** the emulator's PageSize cap: no larger than the largest page feedsync asks (api.pageSize, config/schema.ts) */
const pageCap = wholeIn(1, 10_000);
/** a seed of the emulator's draws: its PRNG takes 32 bits (emulator/prng.ts), so another number would repeat one of these */
const seed = wholeIn(0, 2 ** 32 - 1);
/** A count (--limit, a delay in ms): a whole number, 0 or more. */
const count = wholeIn(0);
const port = wholeIn(0, 65535, 'a port number');
/**
 * A fraction of requests (--fault-rate): a decimal from 0 to 1 (Number() reads '' as 0 and '0x1' as
 * 1, and a rate past 1 would mean nothing); else a usage error naming the range.
 */
const fraction = (value: string) => {
  const n = Number(value);
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value) || n > 1)
    throw new InvalidArgumentError('must be a fraction from 0 to 1 (0.05: one request in 20)');
  return n;
};
const num = (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  return n;
};
const CONFIG_HELP = 'config file (YAML or JSON)';
const NO_REDIS_HELP =
  'run on the state file even though `redis` is configured (not coordinated with workers); without it, a configured Redis that does not answer fails the command';

// `opts` is what commander parsed by the command's declared options (its action arguments are `any`):
// checked here against the options the command's module takes, where this file builds them
async function run<O>(load: () => Promise<{ run: (opts: O) => Promise<number> }>, opts: NoInfer<O>): Promise<void> {
  try {
    const mod = await load();
    process.exitCode = await mod.run(opts);
  } catch (err) {
    printError(err);
    // --json prints exactly one document in every case: `sync --json > report.json` always leaves one
    if (wantsJson(opts)) printJson({ error: errorJson(err) });
    process.exitCode = exitCodeFor(err);
  }
}

function wantsJson(opts: unknown): boolean {
  return typeof opts === 'object' && opts !== null && (opts as { json?: unknown }).json === true;
}

program
  .command('init')
  .description('write a commented starter config (and a sample feed) that works against the embedded emulator')
  .option('-c, --config <file>', 'where to write it', 'feedsync.yaml')
  .option('--force', 'overwrite an existing config file')
  .action((opts) => run(() => import('./cli/init.js'), opts));

program
  .command('sync')
  .description('sync listing feeds to their chatbots once (no Redis needed)')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--feed <name>', 'only this feed (repeatable)', collect)
  .option('--dry-run', 'print the plan, write nothing')
  .option(
    '--force',
    'lift the delete limits (maxCount, maxFraction, empty feed); never deletes after an incomplete read',
  )
  .option(
    '--full',
    'RESO feeds: a full pull instead of an incremental one; file feeds: read even where the seal says nothing changed',
  )
  .option(
    '--reconcile',
    'RESO feeds: a keys-only reconcile: deletes what the server no longer has, fetches what changed by key',
  )
  .option('--no-redis', NO_REDIS_HELP)
  .option('--json', 'one JSON report on stdout')
  .addHelpText('after', `\n${exitHelp()}`)
  .action((opts) => run(() => import('./cli/sync.js'), opts));

program
  .command('undo')
  .description('put a chatbot back as it was before a run, listing for listing, from the change log')
  .argument('<run>', 'run id (printed after each sync, listed by `runs`)')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--dry-run', 'print the plan (creates, updates old → new, deletes, conflicts), write nothing')
  .option('--force', 'revert conflicts too, and undo what can be when the change log did not keep all of the run')
  .option('--json', 'one JSON report on stdout')
  .addHelpText(
    'after',
    `\n${exitHelp()}\n  (undo: 3 the change log did not keep all of the run and nothing was done; 4 conflicts left alone or writes failed)`,
  )
  .action((runId, opts) => run(() => import('./cli/undo.js'), { ...opts, run: runId }));

program
  .command('settings')
  .description("push each chatbot's settings from config (Edit)")
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--chatbot <sn>', 'only this chatbot (repeatable)', collect)
  .option('--dry-run', 'show what would be sent')
  .option('--force', 'push even when unchanged since the last push')
  .option('--no-redis', NO_REDIS_HELP)
  .option('--json', 'one JSON report on stdout')
  .action((opts) => run(() => import('./cli/settings.js'), opts));

program
  .command('smoke')
  .description('send each chatbot its smoke message, plain and streamed, and check the answers')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--chatbot <sn>', 'only this chatbot (repeatable)', collect)
  .option('--json', 'one JSON report on stdout')
  .action((opts) => run(() => import('./cli/smoke.js'), opts));

program
  .command('worker')
  .description('run BullMQ workers, job schedulers and the HTTP server (health, metrics, UI)')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--port <n>', 'HTTP port (health, metrics, UI)', port)
  .action((opts) => run(() => import('./cli/worker.js'), opts));

program
  .command('enqueue')
  .description('ops rerun through the queue: prints the job id')
  .argument('<job>', 'sync | settings | smoke | undo')
  .argument('[run]', 'undo: the run to undo')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--feed <name>', 'feed to sync (repeatable; default all)', collect)
  .option('--chatbot <sn>', 'chatbot for settings or smoke (repeatable; default all)', collect)
  .option('--dry-run', 'sync/settings: plan only')
  .option('--force', 'override guards / push unchanged settings')
  .option('--full', 'sync: a full pull of an incremental RESO feed; a file feed read even where its seal holds')
  .option('--reconcile', 'sync: a keys-only reconcile of a RESO feed')
  .option('--wait', 'wait for the job and print its report')
  .option('--timeout <seconds>', 'with --wait: give up waiting after this long (exit 1; the job goes on)', num)
  .option('--json', 'one JSON document on stdout')
  .addHelpText('after', `\nWith --wait, the job's status:\n${exitHelp()}`)
  .action((job, runId, opts) =>
    run(() => import('./cli/enqueue.js'), { ...opts, job, ...(runId !== undefined && { run: runId }) }),
  );

program
  .command('cancel')
  .description('stop a running sync of a feed on whichever worker holds it; it ends `cancelled`')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .requiredOption('--feed <name>', 'feed whose running sync to stop (repeatable)', collect)
  .option('--timeout <seconds>', 'how long to wait for the run to end (still running then: exit 7)', num, 60)
  .option('--json', 'one JSON document on stdout')
  .action((opts) => run(() => import('./cli/cancel.js'), opts));

for (const action of ['pause', 'resume'] as const) {
  program
    .command(action)
    .description(
      action === 'pause'
        ? 'keep schedules from starting runs of feeds (every worker), until resume'
        : 'let paused schedules start runs again',
    )
    .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
    .option('--feed <name>', 'feed (repeatable)', collect)
    .option('--all', action === 'pause' ? 'every schedule' : 'everything paused')
    .option('--json', 'one JSON document on stdout')
    .action((opts) => run(() => import('./cli/control.js'), { ...opts, action }));
}

const runs = program
  .command('runs')
  // `runs show RUN --json`: options after `show` are show's, not the list's
  .enablePositionalOptions()
  .description(
    'recent runs and their outcomes: the run history in Redis; without Redis, those `sync` recorded beside the state file',
  )
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--feed <name>', 'only this feed')
  .option('--chatbot <sn>', 'only this chatbot')
  .option('--limit <n>', 'most recent N runs', count, 20)
  .option('--json', 'one JSON document on stdout')
  .action((opts) => run(() => import('./cli/runs.js'), opts));

runs
  .command('show')
  .description("one run's changes, listing by listing, from the change log")
  .argument('<run>', 'run id (printed after each sync, listed by `runs`)')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--limit <n>', 'most changes to print', count, 500)
  .option('--json', 'one JSON document on stdout')
  .action((runId, opts) => run(() => import('./cli/runs-show.js'), { ...opts, run: runId }));

program
  .command('history')
  .description("one listing's story from the change log: every create, update (old → new), reject and delete")
  .requiredOption('--feed <name>', 'feed name from config')
  .requiredOption('--key <key>', "the listing's key (MLSNumber or URL, as the feed's keyBy)")
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--limit <n>', 'most recent N changes', count, 50)
  .option('--json', 'one JSON document on stdout')
  .action((opts) => run(() => import('./cli/history.js'), opts));

program
  .command('emulator')
  .description('run the local Chatbot Service emulator')
  .option('--port <n>', 'port (0: any free port)', port, 8787)
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--max-page-size <n>', 'cap on PageSize (1 to 10000)', pageCap, 100)
  .option('--latency-ms <n>', 'added latency per request', count, 0)
  .option('--fault-rate <f>', 'fraction of requests answered with an injected fault (0 to 1)', fraction, 0)
  .option('--faults <list>', 'faults to draw from: 500,503,429,drop', '500,503,429,drop')
  .option('--errors-as-200', 'answer errors as HTTP 200 with Success false')
  .option('--stream-framing <f>', 'sse | lines | concat', 'sse')
  .option('--stream-delay-ms <n>', 'delay between streamed fragments', count, 0)
  .option('--seed <n>', 'seed of the fault and latency draws (0 to 4294967295)', seed, 1)
  .option('--chatbots <list>', 'known serial numbers, comma separated (default: any)')
  .option('--sessions <list>', 'chat sessions to create for ClientAsk, SN:ID comma separated (e.g. SN-DEMO-1:1001)')
  .option('--secret-key <key>', 'Authorization key (or CHATBOT_SECRET_KEY, as in the configs)')
  .option('--session-key <key>', 'chatrobot-sessionkey (or CHATBOT_SESSION_KEY, as in the configs)')
  .option('--data-file <file>', 'keep listings, settings and sessions in this JSON file across restarts')
  .action((opts) => run(() => import('./cli/emulator.js'), opts));

const feed = program.command('feed').description('work with feeds without the API');
feed
  .command('preview')
  .description('read and map a feed: mapped listings, rejected records, counts')
  .requiredOption('--feed <name>', 'feed name from config')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--limit <n>', 'listings to print', count, 10)
  .option('--chatbot <sn>', 'a routed feed (feeds[].chatbots): the routing of this chatbot only')
  .option('--key <key>', 'explain one listing: source record → mapped listing → what the chatbot holds (asks the API)')
  .option(
    '--show-restricted',
    "with --key: print the record's restricted fields and withheld address too (left out by default)",
  )
  .option('--json', 'one JSON document on stdout')
  .action((opts) =>
    opts.key === undefined
      ? run(() => import('./cli/feed-preview.js'), opts)
      : run(() => import('./cli/feed-explain.js'), opts),
  );

feed
  .command('probe')
  .description('RESO: a few small requests saying what the server accepts, and the source settings to use')
  .requiredOption('--feed <name>', 'feed name from config')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--json', 'one JSON document on stdout')
  .action((opts) => run(() => import('./cli/feed-probe.js'), opts));

feed
  .command('drift')
  .description(
    "RESO: the feed's mapping against the source's $metadata and Lookup resource, read now (a vendor's limit on Lookup reads kept); exit 5 on drift",
  )
  .requiredOption('--feed <name>', 'feed name from config')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--stored', 'compare the last read kept, sending no request')
  .option('--no-redis', NO_REDIS_HELP)
  .option('--json', 'one JSON document on stdout')
  .action((opts) => run(() => import('./cli/feed-drift.js'), opts));

const state = program
  .command('state')
  .description('the state file of runs without Redis (state.file) as JSON: export it, edit it, import it');
for (const action of ['export', 'import'] as const) {
  state
    .command(action)
    .description(
      action === 'export'
        ? 'write the state as one JSON document to FILE, or stdout'
        : 'replace the whole state with the JSON document in FILE, or stdin (as export writes it)',
    )
    .argument(
      '[file]',
      action === 'export' ? 'where to write it (default, or -: stdout)' : 'where to read it (default, or -: stdin)',
    )
    .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
    .option('--no-redis', 'with `redis` configured: work on the state file all the same (the state of --no-redis runs)')
    .action((file, opts) => run(() => import('./cli/state.js'), { ...opts, action, file }));
}

const config = program.command('config').description('work with the config file');
config
  .command('check')
  .description('load and validate the config, print a summary (secrets masked)')
  .option('-c, --config <file>', CONFIG_HELP, 'feedsync.yaml')
  .option('--json', 'one JSON document on stdout')
  .action((opts) => run(() => import('./cli/config-check.js'), opts));

program
  .command('completion')
  .description('print a shell completion script: eval "$(feedsync completion bash)" in ~/.bashrc (zsh: ~/.zshrc)')
  .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
  .action((shell) => run(() => import('./cli/completion.js'), { shell, program }));

sayUnknownCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err.exitCode !== 0 && process.argv.includes('--json'))
      printJson({ error: { code: 'USAGE', message: err.message, retryable: false } });
  } else {
    printError(err);
    process.exitCode = exitCodeFor(err);
  }
}
