// Starts an emulator on a free port with a client built for it (fast retries), for integration tests.
import { request } from 'undici';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClientOptions, ChatbotApi } from '../../src/api/types.js';
import type { ListingCreate } from '../../src/listing/schema.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../src/emulator/index.js';
import type { StoredListing } from '../../src/emulator/chatbot-listings.js';
import { ONE_CONNECTION_A_CALL } from './fresh-fetch.js';

export const TEST_SECRET_KEY = 'test-secret-key-0123';
export const TEST_SESSION_KEY = 'test-session-key-4567';

export interface TestEmulator {
  emulator: RunningEmulator;
  url: string;
  api: ChatbotApi;
  /** a client with other options (e.g. onCall, timeoutMs) against the same emulator */
  client(overrides?: Partial<ApiClientOptions>): ChatbotApi;
  stats(): Promise<{ requests: Record<string, Record<string, number>>; total: number }>;
  listings(serialNumber: string): Promise<StoredListing[]>;
  session(serialNumber: string): Promise<number>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

// The admin calls, each on a connection of its own (fresh-fetch.ts says why). Seen reset when kept
// alive in push-settings.emulator.test.ts on Node 22, 5 of 15 runs at load 20-29 on 2 cores, the test
// taking 5.8-12 s. The API client's calls retry a reset; these did not.

/** An answer of the emulator's admin at `url` (`/__emulator/...`), typed as its admin.ts writes them (a test of admin.ts checks them). */
export async function emulatorAdmin<T>(url: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await request(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: ONE_CONNECTION_A_CALL,
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${await res.body.text()}`);
  return (await res.body.json()) as T;
}

export async function startTestEmulator(opts: EmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await startEmulator({ secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY, ...opts });
  const url = emulator.url;
  const client = (overrides: Partial<ApiClientOptions> = {}) =>
    createApiClient({
      baseUrl: url,
      secretKey: opts.secretKey ?? TEST_SECRET_KEY,
      sessionKey: opts.sessionKey ?? TEST_SESSION_KEY,
      // (a hang guard, not a subject: at 5 s a loaded machine timed out a call the emulator then answered,
      // and client.test.ts's 429 case saw a third attempt; a test of timeouts sets its own)
      timeoutMs: 60_000,
      ...overrides,
      retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 10, ...overrides.retry },
    });
  const admin = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => emulatorAdmin<T>(url, method, path, body);
  return {
    emulator,
    url,
    api: client(),
    client,
    stats: () => admin('GET', '/__emulator/stats'),
    listings: async (sn) =>
      (await admin<{ listings: StoredListing[] }>('GET', `/__emulator/listings?serialNumber=${encodeURIComponent(sn)}`))
        .listings,
    session: async (sn) =>
      (await admin<{ sessionID: number }>('POST', '/__emulator/sessions', { serialNumber: sn })).sessionID,
    reset: async () => void (await admin<unknown>('POST', '/__emulator/reset')),
    close: () => emulator.close(),
  };
}

/** A listing that passes the create schema; override what a test cares about. */
export function sampleListing(overrides: Record<string, unknown> = {}): ListingCreate {
  return {
    SerialNumber: 'SN-1',
    SaleType: 'for_sale',
    Status: 'Active',
    CurrencySymbol: '$',
    PropertyType: 'Single Family',
    Bedrooms: 3,
    Bathrooms: 2.5,
    Url: 'https://example.com/listing/A1',
    MLSNumber: 'A1',
    YearBuilt: 1999,
    DaysOnMarket: 12,
    LotArea: 6000,
    BuildingArea: 1850,
    AreaUnit: 'Square Feet',
    ParkingSpots: 2,
    City: 'Austin',
    Address: '12 Oak St',
    SalePrice: 450000,
    ...overrides,
  };
}
