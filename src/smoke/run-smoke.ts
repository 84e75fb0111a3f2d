// Sends each chatbot its configured smoke message, plain and streamed, and checks the answers.
// Each call is one attempt: a retry would hide the flaky service the smoke is there to notice,
// and would put the retries' waiting into the latency it reports.
import { performance } from 'node:perf_hooks';
import type { ChatbotApi } from '../api/types.js';
import type { ChatbotConfig } from '../config/schema.js';
import { ConfigError, stoppedOutcome } from '../errors.js';
import type { Logger } from '../log.js';
import { selectChatbots } from '../config/select.js';
import { answerChecks, check, joinCheck } from './checks.js';
import type { ChatbotSmokeResult, SmokeCheck, SmokeReport } from './report.js';

export interface SmokeDeps {
  api: ChatbotApi;
  logger: Logger;
  signal?: AbortSignal;
}

export interface SmokeOptions {
  /** only these serial numbers (default: every chatbot with a smoke message) */
  only?: readonly string[];
}

type Smoke = NonNullable<ChatbotConfig['smoke']>;

export async function runSmoke(
  chatbots: readonly ChatbotConfig[],
  deps: SmokeDeps,
  opts: SmokeOptions = {},
): Promise<SmokeReport> {
  const started = new Date();
  const selected = selectChatbots(chatbots, opts.only).map(({ chatbot }) => chatbot);
  const unconfigured = selected.filter((c) => !c.smoke).map((c) => c.serialNumber);
  if (opts.only?.length && unconfigured.length) {
    throw new ConfigError(
      `chatbot ${unconfigured.join(', ')} has no smoke message in config (chatbots[].smoke.sessionId and message)`,
    );
  }
  const results: ChatbotSmokeResult[] = [];
  for (const chatbot of selected) {
    if (chatbot.smoke) results.push(await smokeOne(chatbot, chatbot.smoke, deps));
  }
  return buildReport(results, started, deps.signal);
}

async function smokeOne(chatbot: ChatbotConfig, smoke: Smoke, deps: SmokeDeps): Promise<ChatbotSmokeResult> {
  const { serialNumber } = chatbot;
  const suffix = chatbot.settings?.AnswerSuffix;
  const request = { sessionID: smoke.sessionId, content: smoke.message };
  const call = { signal: deps.signal, retry: false };
  const checks: SmokeCheck[] = [];

  const t0 = performance.now();
  try {
    const answer = await deps.api.ask(request, call);
    checks.push(check('ask.success', true, 'Success true'));
    checks.push(
      ...answerChecks('ask', { content: answer.content, tokens: answer.totalToken, noAnswer: answer.noAnswer }, suffix),
    );
  } catch (err) {
    checks.push(check('ask.success', false, messageOf(err)));
  }
  const latencyMs = ms(performance.now() - t0);

  const result: ChatbotSmokeResult = { serialNumber, ok: false, checks, latencyMs };
  if (smoke.stream) Object.assign(result, await streamChecks(request, suffix, deps, checks));

  const failed = checks.find((c) => !c.ok);
  result.ok = !failed;
  if (failed) result.reason = `${failed.name}: ${failed.detail}`;
  const log = deps.logger.child({ chatbot: serialNumber });
  if (failed) log.info({ checks: checks.filter((c) => !c.ok) }, `smoke failed: ${result.reason}`);
  else log.info({ latencyMs, firstFragmentMs: result.firstFragmentMs, streamMs: result.streamMs }, 'smoke passed');
  return result;
}

async function streamChecks(
  request: { sessionID: number; content: string },
  suffix: string | undefined,
  deps: SmokeDeps,
  checks: SmokeCheck[],
): Promise<{ firstFragmentMs?: number; streamMs: number }> {
  const fragments: string[] = [];
  let final: { Answer: string; TotalToken: number } | undefined;
  let firstFragmentMs: number | undefined;
  const t0 = performance.now();
  try {
    for await (const event of deps.api.askStream({ ...request, stream: true }, { signal: deps.signal, retry: false })) {
      if (event.type === 'fragment') {
        firstFragmentMs ??= ms(performance.now() - t0);
        fragments.push(event.content);
      } else {
        final = event;
      }
    }
    if (final) checks.push(check('stream.success', true, `${fragments.length} fragment(s) and the final object`));
    else
      checks.push(
        check(
          'stream.success',
          false,
          `the stream ended without the final object after ${fragments.length} fragment(s)`,
        ),
      );
  } catch (err) {
    checks.push(check('stream.success', false, `${messageOf(err)} (after ${fragments.length} fragment(s))`));
  }
  const streamMs = ms(performance.now() - t0);
  if (final) {
    checks.push(...answerChecks('stream', { content: final.Answer, tokens: final.TotalToken }, suffix));
    checks.push(joinCheck(fragments, final.Answer));
  }
  return { firstFragmentMs, streamMs };
}

function buildReport(results: ChatbotSmokeResult[], started: Date, signal: AbortSignal | undefined): SmokeReport {
  const finished = new Date();
  const durationMs = finished.getTime() - started.getTime();
  const failed = results.filter((r) => !r.ok);
  const passed = results.length - failed.length;
  const why = failed.length ? ` (${failed.map((r) => `${r.serialNumber} ${r.reason}`).join('; ')})` : '';
  const summary = results.length
    ? `smoke: ${passed} passed, ${failed.length} failed${why} in ${durationMs} ms`
    : 'smoke: no chatbot has a smoke message in config';
  return {
    kind: 'smoke',
    // (stopped: the sync's word for the stop, so a hand-back or a takeover is no failed run here either)
    outcome: signal?.aborted ? stoppedOutcome(signal.reason) : failed.length ? 'failed' : 'ok',
    chatbots: results,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs,
    summary,
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const ms = (value: number) => Math.round(value);
