// The checks of one answer, plain or streamed: pure functions of what came back.
import type { SmokeCheck } from './report.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface AnswerSeen {
  content: string;
  tokens: number;
  /** the plain answer says it; the streamed one does not */
  noAnswer?: boolean;
}

export function answerChecks(prefix: 'ask' | 'stream', answer: AnswerSeen, suffix: string | undefined): SmokeCheck[] {
  const checks: SmokeCheck[] = [
    check(
      `${prefix}.content`,
      answer.content.trim().length > 0,
      answer.content.trim() ? `${answer.content.length} characters` : 'the answer is empty',
    ),
  ];
  if (answer.noAnswer !== undefined) {
    checks.push(
      check(
        `${prefix}.noAnswer`,
        !answer.noAnswer,
        answer.noAnswer
          ? `noAnswer is true: the chatbot had no answer (it said ${JSON.stringify(tail(answer.content))})`
          : 'noAnswer is false',
      ),
    );
  }
  if (suffix !== undefined && suffix.trim()) {
    const ok = answer.content.trimEnd().endsWith(suffix.trim());
    checks.push(
      check(
        `${prefix}.suffix`,
        ok,
        ok
          ? `ends with ${JSON.stringify(suffix)}`
          : // the spec has no way to read a session's chatbot: this chatbot's AnswerSuffix is how its answers are told apart
            `AnswerSuffix ${JSON.stringify(suffix)} missing at the end of ${JSON.stringify(tail(answer.content))}; push the settings (${feedsyncCommand()} settings), and check that smoke.sessionId is a session of this chatbot, not another's`,
      ),
    );
  }
  checks.push(check(`${prefix}.totalToken`, answer.tokens > 0, `${answer.tokens} token(s)`));
  return checks;
}

/** The fragments of a stream must join to its final Answer, exactly. */
export function joinCheck(fragments: readonly string[], answer: string): SmokeCheck {
  const joined = fragments.join('');
  if (joined === answer) return check('stream.join', true, `${fragments.length} fragment(s) join to the final Answer`);
  let at = 0;
  while (at < joined.length && at < answer.length && joined[at] === answer[at]) at += 1;
  return check(
    'stream.join',
    false,
    `${fragments.length} fragment(s) join to ${joined.length} characters, the final Answer has ${answer.length}; ` +
      `they differ from character ${at}: ${JSON.stringify(joined.slice(at, at + 30))} vs ${JSON.stringify(answer.slice(at, at + 30))}`,
  );
}

export function check(name: string, ok: boolean, detail: string): SmokeCheck {
  return { name, ok, detail };
}

function tail(text: string): string {
  return text.length > 60 ? `…${text.slice(-60)}` : text;
}
