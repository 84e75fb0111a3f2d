// The credentials of a feed's photo downloads (media mirror) and where they may go: what the source's
// vendor profile requires (vendors/profile.ts, mediaUserAgent: MLS Grid's media host serves a photo
// only to a download whose User-Agent is the subscriber's access token, since 1 June 2026), then
// `source.mediaHeaders`, which win; sent only over https to a host the profile (`mediaHosts`:
// MLS Grid's media.mlsgrid.com) or `source.mediaHosts` names. Any other photo URL is fetched bare.
// Header names are lower-cased, so User-Agent and user-agent are one header.
import type { FeedSource } from './config-schema.js';
import { vendorProfile } from './vendors/registry.js';

export interface MediaCredentials {
  headers: Readonly<Record<string, string>>;
  /** host names (lower case) the headers may be sent to, over https */
  hosts: ReadonlySet<string>;
}

export function mediaCredentials(source: FeedSource): MediaCredentials {
  const headers: Record<string, string> = {};
  const hosts = new Set<string>();
  if (source.kind === 'reso') {
    const profile = vendorProfile(source.vendor);
    if (profile.mediaUserAgent === 'accessToken' && source.bearerToken) headers['user-agent'] = source.bearerToken;
    for (const host of profile.mediaHosts ?? []) hosts.add(host);
  }
  for (const [name, value] of Object.entries(source.mediaHeaders ?? {})) headers[name.toLowerCase()] = value;
  for (const host of source.mediaHosts ?? []) hosts.add(host.toLowerCase());
  return { headers, hosts };
}

/** The headers a photo URL gets: the credentials where they belong, nothing elsewhere. */
export function credentialsFor(url: URL, creds: MediaCredentials): Readonly<Record<string, string>> {
  return url.protocol === 'https:' && creds.hosts.has(url.hostname.toLowerCase()) ? creds.headers : {};
}
