// A create is not idempotent: if its answer is lost (timeout, dropped connection, 502/503/504), the
// listing may exist already, and sending it again would make a duplicate. So creates are sent with
// one attempt each (`retry: false`), and after a lost answer the list is asked, filtered by the
// listing's MLSNumber, before the create is sent again. A 429 was refused before it was processed:
// it is retried after its Retry-After without a check.
import { retryDelay, retryPolicy } from '../../api/retry.js';
import { sleep } from '../../net/sleep.js';
import type { ChatbotApi } from '../../api/types.js';
import { RateLimitedError } from '../../errors.js';
import type { ListingCreate } from '../../listing/schema.js';
import type { KeyBy } from '../model/plan-types.js';
import { remoteKey } from '../model/remote-key.js';

export interface CreateOnceOptions {
  keyBy: KeyBy;
  key: string;
  /** attempts after the first, as the client's retry policy */
  retries: number;
  baseDelayMs?: number;
  signal?: AbortSignal;
  /** hears each create sent again (counted with the client's retries in the report) */
  onResend?: () => void;
  /** whose calls these are (CallOptions.scope) */
  scope?: string;
}

/** 'created', or 'found' when a lost create turned out to have been made. Throws the last error. */
export async function createOnce(
  api: ChatbotApi,
  listing: ListingCreate,
  opts: CreateOnceOptions,
): Promise<'created' | 'found'> {
  const policy = retryPolicy({
    retries: opts.retries,
    ...(opts.baseDelayMs !== undefined && { baseDelayMs: opts.baseDelayMs }),
  });
  for (let attempt = 1; ; attempt++) {
    try {
      await api.createListing(listing, { retry: false, ...(opts.scope !== undefined && { scope: opts.scope }) });
      return 'created';
    } catch (err) {
      const delay = retryDelay(err, policy, attempt);
      if (delay === undefined || opts.signal?.aborted) throw err;
      await sleep(delay, opts.signal, `create ${opts.key}`);
      if (!(err instanceof RateLimitedError) && (await exists(api, listing, opts))) return 'found';
      opts.onResend?.();
    }
  }
}

async function exists(api: ChatbotApi, listing: ListingCreate, opts: CreateOnceOptions): Promise<boolean> {
  const data = await api.listListings(
    { SerialNumber: listing.SerialNumber, MLSNumber: listing.MLSNumber, PageSize: 100 },
    opts.scope === undefined ? undefined : { scope: opts.scope },
  );
  return data.List.some((item) => remoteKey(item, opts.keyBy) === opts.key);
}
