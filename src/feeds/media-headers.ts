// The headers of a feed's photo downloads (media mirror): `source.mediaHeaders`, and what the
// source's vendor profile adds. A vendor profile sets its rule with setMediaHeaderRule; the one
// known today is MLS Grid's: since 1 June 2026 its media host serves a photo only to a download
// whose User-Agent is the subscriber's access token (FIELD-NOTES.md, "Vendors bend the standard").
// Configured headers win over a profile's. Names are lower-cased, so User-Agent and user-agent are one.
import type { FeedSource } from './config-schema.js';

export type MediaHeaderRule = (source: FeedSource) => Record<string, string>;

const mlsGrid: MediaHeaderRule = (source) => {
  const headers: Record<string, string> = {};
  if (source.bearerToken) headers['user-agent'] = source.bearerToken;
  return headers;
};
const rules = new Map<string, MediaHeaderRule>([['mlsgrid', mlsGrid]]);

/** A vendor profile's photo headers (replaces the vendor's rule). */
export function setMediaHeaderRule(vendor: string, rule: MediaHeaderRule): void {
  rules.set(vendor, rule);
}

/** The vendor profile a source names (source.vendor), when it names one. */
function vendorOf(source: FeedSource): string | undefined {
  return 'vendor' in source && typeof source.vendor === 'string' ? source.vendor : undefined;
}

export function mediaHeaders(source: FeedSource): Record<string, string> {
  const vendor = vendorOf(source);
  const fromProfile = vendor === undefined ? {} : (rules.get(vendor)?.(source) ?? {});
  const out: Record<string, string> = {};
  for (const [name, value] of [...Object.entries(fromProfile), ...Object.entries(source.mediaHeaders ?? {})]) out[name.toLowerCase()] = value;
  return out;
}
