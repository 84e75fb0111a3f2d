// Every request made for one feed's read, by what it was for, and the OAuth2 token endpoint's calls
// apart (issue 35): shared by every page client of the read (the pull's, a keys-only read's), so the
// report's `source.requests` is what the server received — each page, each retry and redirect hop,
// `$metadata`, the keyset proof's `$count`, the requests by key (a confirmation's, a reconcile's or an
// EntityEvent poll's fetch), the keys-only reads, the EntityEvent log, a related resource's pull (OpenHouse) — and `tokenCalls` what the
// token endpoint received (a cached token costs none). And the bytes of every answer read whole (after
// gunzip), by whichever client of the read asked: the report's `source.bytes` (issue 54: a confirmation's
// answers, read after the pull, were left out when the pull's own client was asked at its end).

/**
 * What a request to the source was for (the report's `source.requestsBy`). A related resource's pages
 * (source.related: `Member`, `Office`, `OpenHouse`, …) are counted apart from the Property's, under
 * the resource's name (capitalised, as RESO names resources); `lookups`: the Lookup resource's (feed drift).
 */
export type RequestKind =
  'pages' | 'byKey' | 'keys' | 'proof' | 'metadata' | 'events' | 'probe' | 'lookups' | `${Uppercase<string>}${string}`;

export interface RequestTally {
  /** requests sent to the source (token calls aside) */
  readonly total: number;
  /** the same, by what they were for (kinds never asked are absent) */
  readonly by: Readonly<Partial<Record<RequestKind, number>>>;
  /** calls of the OAuth2 token endpoint (each attempt) */
  readonly tokenCalls: number;
  /** bytes of the answers read whole (after gunzip), every client of the read's */
  readonly bytes: number;
  sent(kind: RequestKind): void;
  tokenCall(): void;
  /** an answer of `n` bytes read whole */
  received(n: number): void;
}

export function requestTally(): RequestTally {
  const by: Partial<Record<RequestKind, number>> = {};
  let total = 0;
  let tokenCalls = 0;
  let bytes = 0;
  return {
    get total() {
      return total;
    },
    by,
    get tokenCalls() {
      return tokenCalls;
    },
    sent(kind) {
      total++;
      by[kind] = (by[kind] ?? 0) + 1;
    },
    get bytes() {
      return bytes;
    },
    tokenCall() {
      tokenCalls++;
    },
    received(n) {
      bytes += n;
    },
  };
}
