// Pushes each chatbot's settings from config with Edit: checked first, skipped when unchanged
// since the last successful push (a hash in the KvStore), forced or previewed on request.
import type { ChatbotApi } from '../api/types.js';
import type { EditSettingsRequest } from '../api/schemas.js';
import type { ChatbotConfig } from '../config/schema.js';
import { AbortedError, FeedsyncError, stoppedOutcome } from '../errors.js';
import type { Logger } from '../log.js';
import type { KvStore } from '../state/kv-store.js';
import type { ChatbotSettingsResult, ReportedError, SettingsReport, SettingsStatus } from './report.js';
import { selectChatbots } from '../config/select.js';
import { checkSettings, formatSettingsIssue } from './settings-schema.js';
import { SETTINGS_HASH_NS, settingsHash } from './settings-hash.js';

export interface SettingsDeps {
  api: ChatbotApi;
  store: KvStore;
  logger: Logger;
  signal?: AbortSignal;
}

export interface SettingsOptions {
  /** show what would be sent; send nothing, remember nothing */
  dryRun?: boolean;
  /** push even when the settings are unchanged since the last push */
  force?: boolean;
  /** only these serial numbers (default: every chatbot); an unknown one is a ConfigError */
  only?: readonly string[];
}

export async function pushSettings(
  chatbots: readonly ChatbotConfig[],
  deps: SettingsDeps,
  opts: SettingsOptions = {},
): Promise<SettingsReport> {
  const started = new Date();
  const selected = selectChatbots(chatbots, opts.only).filter(({ chatbot }) => hasSettings(chatbot));
  const results: ChatbotSettingsResult[] = [];
  for (const { chatbot, index } of selected) {
    if (deps.signal?.aborted) {
      results.push(failed(chatbot, new AbortedError(`settings push of ${chatbot.serialNumber}`, deps.signal.reason)));
      continue;
    }
    results.push(await pushOne(chatbot, `chatbots[${index}].settings`, deps, opts));
  }
  return buildReport(results, deps, opts, started);
}

function hasSettings(chatbot: ChatbotConfig): boolean {
  return Object.keys(chatbot.settings ?? {}).length > 0;
}

async function pushOne(
  chatbot: ChatbotConfig,
  path: string,
  deps: SettingsDeps,
  opts: SettingsOptions,
): Promise<ChatbotSettingsResult> {
  const { serialNumber } = chatbot;
  const settings = chatbot.settings ?? {};
  const fields = Object.keys(settings);
  const log = deps.logger.child({ chatbot: serialNumber });
  const issues = checkSettings(settings, path);
  if (issues.length) {
    log.info({ issues: issues.map(formatSettingsIssue) }, 'settings invalid: nothing sent');
    return { serialNumber, status: 'invalid', fields, issues };
  }
  const body: EditSettingsRequest = { serialNumber, ...settings };
  const hash = settingsHash(serialNumber, settings);
  const unchanged = !opts.force && (await deps.store.get(SETTINGS_HASH_NS, serialNumber)) === hash;
  if (opts.dryRun) return { serialNumber, status: unchanged ? 'unchanged' : 'would-push', fields, body };
  if (unchanged) {
    log.info('settings unchanged since the last push: skipped');
    return { serialNumber, status: 'unchanged', fields };
  }
  try {
    const data = await deps.api.editSettings(body, { signal: deps.signal });
    if (data !== 1) {
      return {
        serialNumber,
        status: 'failed',
        fields,
        error: { message: `Edit answered Data ${data} (1 means success)`, code: 'EDIT_NOT_APPLIED', retryable: false },
      };
    }
  } catch (err) {
    log.info({ err }, 'settings push failed');
    return failed(chatbot, err);
  }
  await deps.store.set(SETTINGS_HASH_NS, [[serialNumber, hash]]);
  log.info({ fields }, 'settings pushed');
  return { serialNumber, status: 'pushed', fields };
}

function failed(chatbot: ChatbotConfig, err: unknown): ChatbotSettingsResult {
  return {
    serialNumber: chatbot.serialNumber,
    status: 'failed',
    fields: Object.keys(chatbot.settings ?? {}),
    error: reportedError(err),
  };
}

function reportedError(err: unknown): ReportedError {
  if (err instanceof FeedsyncError) return { message: err.message, code: err.code, retryable: err.retryable };
  return { message: err instanceof Error ? err.message : String(err), code: 'UNEXPECTED', retryable: false };
}

function buildReport(
  results: ChatbotSettingsResult[],
  deps: SettingsDeps,
  opts: SettingsOptions,
  started: Date,
): SettingsReport {
  const counts: Record<SettingsStatus, number> = { pushed: 0, unchanged: 0, invalid: 0, failed: 0, 'would-push': 0 };
  for (const r of results) counts[r.status] += 1;
  const finished = new Date();
  const durationMs = finished.getTime() - started.getTime();
  const bad = results.filter((r) => r.status === 'invalid' || r.status === 'failed');
  const aborted = results.some((r) => r.error?.code === 'ABORTED');
  const dryRun = Boolean(opts.dryRun);
  const summary = dryRun
    ? `settings (dry run): ${counts['would-push']} would push, ${counts.unchanged} unchanged, ${counts.invalid} invalid in ${durationMs} ms`
    : `settings: ${counts.pushed} pushed, ${counts.unchanged} unchanged, ${counts.invalid} invalid, ${counts.failed} failed in ${durationMs} ms`;
  return {
    kind: 'settings',
    // (stopped: the sync's word for the stop, so a hand-back or a takeover is no failed run here either)
    outcome: aborted ? stoppedOutcome(deps.signal?.reason) : bad.length ? 'failed' : 'ok',
    retryable: bad.length > 0 && bad.every((r) => r.error?.retryable === true),
    dryRun,
    force: Boolean(opts.force),
    counts,
    chatbots: results,
    stateLocation: deps.store.location,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs,
    summary,
  };
}
