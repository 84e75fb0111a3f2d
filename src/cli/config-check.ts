// `feedsync config check`: load and validate the config, then what the schema alone cannot see:
// each chatbot's settings by the rules the settings push applies, that each feed's mapping gives its key,
// that every feed file exists, and the queue UI's secrets in this environment as the worker's start
// checks them (server/ui-auth.ts: one check for both).
// Any problem is exit 2 with its line; a config that passes this runs.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { defaultedKeyWarnings } from '../config/defaulted-keys.js';
import { selectFlagWarnings } from '../config/select-reads.js';
import { loadConfigWithLines } from '../config/load.js';
import type { LineOf } from '../config/issues.js';
import type { LoadedConfig } from '../config/schema.js';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { describeVendor } from '../feeds/vendors/describe.js';
import { checkSettings, formatSettingsIssue } from '../settings/index.js';
import { describeRedis } from '../redis/settings.js';
import { mergedRules } from '../mapping/compile.js';
import { uiAdminHint, uiSecretIssues, UI_ADMIN_HINT } from '../server/ui-auth.js';
import { printJson } from './exit.js';

export async function run(opts: { config: string; json?: boolean }): Promise<number> {
  const { loaded, lineOf } = await loadConfigWithLines(opts.config);
  const issues = [
    ...settingsIssues(loaded, lineOf),
    ...keyIssues(loaded, lineOf),
    ...(await feedFileIssues(loaded, lineOf)),
    ...uiSecretIssues(),
  ];
  if (issues.length) throw new ConfigError(`config ${opts.config} is invalid`, opts.config, issues);
  const { config, file } = loaded;
  const summary = {
    file,
    api: { baseUrl: config.api.baseUrl, concurrency: config.api.concurrency, ratePerSecond: config.api.ratePerSecond },
    redis: config.redis
      ? {
          where: describeRedis(config.redis),
          ...(config.redis.url && { url: config.redis.url.replace(/\/\/[^@/]*@/, '//***@') }),
        }
      : null,
    chatbots: config.chatbots.map((c) => ({
      serialNumber: c.serialNumber,
      settings: Object.keys(c.settings ?? {}).length,
      smoke: Boolean(c.smoke),
    })),
    feeds: config.feeds.map((f) => ({
      name: f.name,
      chatbot: f.chatbot,
      kind: f.source.kind,
      keyBy: f.keyBy,
      deletes: f.deletes.mode,
      schedule: f.schedule?.cron ?? null,
      ...(f.source.kind === 'reso' && { vendor: describeVendor(f.source) }),
    })),
  };
  // half of a login (a user without its password): said as the worker's start says it
  const uiHint = uiAdminHint();
  const warnings = [
    ...defaultedKeyWarnings(loaded),
    ...selectFlagWarnings(loaded),
    ...(uiHint === UI_ADMIN_HINT ? [] : [uiHint]),
  ];
  if (opts.json) printJson({ ok: true, ...summary, warnings });
  else {
    process.stderr.write(
      `config ${file} is valid: ${summary.feeds.length} feed(s), ${summary.chatbots.length} chatbot(s), api ${summary.api.baseUrl}\n`,
    );
    for (const f of summary.feeds) {
      process.stderr.write(
        `  feed ${f.name} (${f.kind}) → ${f.chatbot}, key ${f.keyBy}, deletes ${f.deletes}${f.schedule ? `, cron ${f.schedule}` : ''}\n`,
      );
      if (f.vendor) process.stderr.write(`    ${f.vendor}\n`);
    }
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  }
  return 0;
}

/** Each chatbot's settings by the rules `feedsync settings` applies before it sends them. */
function settingsIssues({ config }: LoadedConfig, lineOf: LineOf): ConfigIssue[] {
  return config.chatbots.flatMap((chatbot, i) => {
    const base = `chatbots[${i}].settings`;
    return checkSettings(chatbot.settings ?? {}, base).map((issue) => {
      const key = issue.field.slice(base.length + 1);
      return {
        path: issue.field,
        line: lineOf(['chatbots', i, 'settings', ...(key ? [key] : [])]),
        message: formatSettingsIssue(issue),
      };
    });
  });
}

/**
 * A mapping that gives no value to the feed's key (no rule of its own or its preset's, no default)
 * rejects every record of every run: say so now. (A feed without `mapping` maps nothing.)
 */
function keyIssues({ config }: LoadedConfig, lineOf: LineOf): ConfigIssue[] {
  return config.feeds.flatMap((feed, i) => {
    const field = feed.keyBy === 'URL' ? 'Url' : 'MLSNumber';
    if (mergedRules(feed.mapping)[field] || feed.mapping.defaults[field] !== undefined) return [];
    return [
      {
        path: `feeds[${i}].mapping`,
        line: lineOf(['feeds', i, 'mapping']) ?? lineOf(['feeds', i]),
        message: `feeds[${i}].mapping gives no ${field}, the feed's key (keyBy ${feed.keyBy}): every record would be rejected; map it (mapping.fields.${field}: COLUMN) or use a preset that does`,
      },
    ];
  });
}

/** A feed read from a file that is not there fails every run: say so now. */
async function feedFileIssues({ config, dir }: LoadedConfig, lineOf: LineOf): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  for (const [i, feed] of config.feeds.entries()) {
    const path = feed.source.path;
    if (!path) continue;
    const full = resolve(dir, path);
    const problem = await stat(full).then(
      (s) => (s.isFile() ? undefined : 'is not a file'),
      (err: NodeJS.ErrnoException) =>
        err.code === 'ENOENT' ? 'does not exist' : `cannot be read (${err.code ?? err.message})`,
    );
    if (problem) {
      issues.push({
        path: `feeds[${i}].source.path`,
        line: lineOf(['feeds', i, 'source', 'path']),
        message: `feeds[${i}].source.path: ${path} ${problem} (looked for ${full}; a relative path is relative to the config file's folder)`,
      });
    }
  }
  return issues;
}
