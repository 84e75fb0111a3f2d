// A refused credential (HTTP 401/403) as the steps record it: the error as it came and the feed
// whose run it ends, a value, not words. It ends the feed's run at once (every later call would be
// refused too): the step that met it stops there. Its words (the config key to fix and the variable
// behind it, util/auth.ts authFailure) are made by the run, where the lane's report is made
// (run/feed-context.ts): only the run knows which config values came from the environment.
import { ApiError, authStatus, FeedReadError, ResponseFormatError } from '../../errors.js';

export interface Refusal {
  /** the refused call: its endpoint, HTTP status and Code (the Chatbot Service), or the feed server's answer (its URL, status, the setting it names) */
  readonly err: ApiError | ResponseFormatError | FeedReadError;
  /** the status the refusal came with (an ApiError's Code read as one: errors.ts effectiveStatus) */
  readonly status: 401 | 403;
  /** the feed whose run it ends: a feed server's refusal is worded under the feed's name (`feeds[mls].source.bearerToken`) */
  readonly feed: string;
}

/** `err` as a refused credential of `feed`'s run, or undefined when it is no such refusal. */
export function refusalOf(err: unknown, feed: string): Refusal | undefined {
  const status = authStatus(err);
  if (status === undefined) return undefined;
  const refused = err instanceof ApiError || err instanceof ResponseFormatError || err instanceof FeedReadError;
  return refused ? { err, status, feed } : undefined;
}
