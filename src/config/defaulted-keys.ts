// The API keys a config took from a `${VAR:-default}` whose VAR is not set, while api.baseUrl is a
// service on another machine. The starter config (feedsync init) reads its keys that way so that it
// runs as it is against the emulator; pointed at the real service with the variables not exported,
// it sent the emulator's development keys and the only sign was a 401. Said by `config check` and
// before a run's first call; never the value.
import type { LoadedConfig } from './schema.js';

const KEYS = ['api.secretKey', 'api.sessionKey'] as const;

/** One warning per API key left at its written default while the service is elsewhere. */
export function defaultedKeyWarnings(loaded: LoadedConfig): string[] {
  const { baseUrl } = loaded.config.api;
  if (!loaded.defaulted?.size || baseUrl === 'embedded' || onThisMachine(baseUrl)) return [];
  return KEYS.flatMap((key) => {
    const from = loaded.defaulted?.get(key);
    if (!from) return [];
    const place = `${loaded.file}${from.line !== undefined ? `:${from.line}` : ''}`;
    return [
      `${place}: ${key} is the default written in the config, because ${from.variable} is not set, and api.baseUrl is ${baseUrl}: export ${from.variable} with the service's key (a default is for the emulator)`,
    ];
  });
}

/** A loopback address: the emulator on this machine, which takes the development keys. */
function onThisMachine(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false; // (not a URL: not this machine; the URL check says it)
  }
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
