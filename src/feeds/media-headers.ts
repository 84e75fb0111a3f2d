// The headers of a feed's photo downloads (media mirror): what the source's vendor profile requires
// (vendors/profile.ts, mediaUserAgent: MLS Grid's media host serves a photo only to a download whose
// User-Agent is the subscriber's access token, since 1 June 2026), then `source.mediaHeaders`, which
// win. Names are lower-cased, so User-Agent and user-agent are one header.
import type { FeedSource } from './config-schema.js';
import { vendorProfile } from './vendors/registry.js';

export function mediaHeaders(source: FeedSource): Record<string, string> {
  const out: Record<string, string> = {};
  if (source.kind === 'reso' && vendorProfile(source.vendor).mediaUserAgent === 'accessToken' && source.bearerToken) out['user-agent'] = source.bearerToken;
  for (const [name, value] of Object.entries(source.mediaHeaders ?? {})) out[name.toLowerCase()] = value;
  return out;
}
