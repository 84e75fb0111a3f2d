// What the emulated service holds: listings per chatbot (integer IDs), chatbot settings, chat
// sessions and message counts. Plain data, so it can be saved to and loaded from a JSON file.
import type { ChatbotSettings } from '../api/schemas.js';
import { ChatbotListings, type StoredListing } from './chatbot-listings.js';

export interface Session {
  serialNumber: string;
  /** times (ms) of the asks that were answered, for RateLimitCount/RateLimitTime */
  asks: number[];
}

export class EmulatorState {
  nextId = 1;
  nextMessageId = 1;
  nextSessionId = 1001;
  /** serialNumber → that chatbot's listings, indexed */
  readonly listings = new Map<string, ChatbotListings>();
  readonly settings = new Map<string, ChatbotSettings>();
  readonly sessions = new Map<number, Session>();
  /** serialNumber → { month "YYYY-MM", count } for MessageLimit */
  readonly monthly = new Map<string, { month: string; count: number }>();
  /** serialNumber → MLS numbers / URLs the chatbot leaves out of its answers (a test's knob; not saved) */
  readonly hidden = new Map<string, Set<string>>();

  listingsOf(serialNumber: string): ChatbotListings {
    let m = this.listings.get(serialNumber);
    if (!m) this.listings.set(serialNumber, (m = new ChatbotListings()));
    return m;
  }

  clear(): void {
    this.listings.clear();
    this.settings.clear();
    this.sessions.clear();
    this.monthly.clear();
    this.hidden.clear();
    this.nextId = 1;
    this.nextMessageId = 1;
    this.nextSessionId = 1001;
  }

  toJSON(): SavedState {
    return {
      nextId: this.nextId,
      nextMessageId: this.nextMessageId,
      nextSessionId: this.nextSessionId,
      listings: Object.fromEntries([...this.listings].map(([sn, m]) => [sn, [...m.values()]])),
      settings: Object.fromEntries(this.settings),
      sessions: Object.fromEntries([...this.sessions].map(([id, s]) => [String(id), s.serialNumber])),
      monthly: Object.fromEntries(this.monthly),
    };
  }

  load(saved: SavedState): void {
    this.clear();
    this.nextId = saved.nextId;
    this.nextMessageId = saved.nextMessageId;
    this.nextSessionId = saved.nextSessionId;
    for (const [sn, items] of Object.entries(saved.listings)) {
      const stored = this.listingsOf(sn);
      for (const l of items) stored.put(l);
    }
    for (const [sn, s] of Object.entries(saved.settings)) this.settings.set(sn, s);
    for (const [id, sn] of Object.entries(saved.sessions))
      this.sessions.set(Number(id), { serialNumber: sn, asks: [] });
    for (const [sn, m] of Object.entries(saved.monthly)) this.monthly.set(sn, m);
  }
}

export interface SavedState {
  nextId: number;
  nextMessageId: number;
  nextSessionId: number;
  listings: Record<string, StoredListing[]>;
  settings: Record<string, ChatbotSettings>;
  sessions: Record<string, string>;
  monthly: Record<string, { month: string; count: number }>;
}
