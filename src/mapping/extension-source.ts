// A preset's ExtensionColumn entry: where its value comes from. A source path, or the first
// non-empty of several (`first`: ListAgentPreferredPhone, else ListAgentDirectPhone), or the
// non-empty parts joined by a space (`join`: ListAgentFirstName ListAgentLastName), nested as needed.
// A path that reads a repeated element (ListHub's Participant) takes its first value: an entry
// names one agent, never a list of several run together.
import { compilePath, isEmpty } from './paths.js';

export type ExtensionSource = string | { first: ExtensionSource[] } | { join: ExtensionSource[] };

/** Every source path an entry reads (the restricted-field check looks at each). */
export function extensionPaths(source: ExtensionSource): string[] {
  if (typeof source === 'string') return [source];
  return ('first' in source ? source.first : source.join).flatMap(extensionPaths);
}

/** The entry's value of a record as text, undefined when it has none. */
export function compileExtensionSource(
  source: ExtensionSource,
): (record: Record<string, unknown>) => string | undefined {
  if (typeof source === 'string') {
    const get = compilePath(source);
    return (record) => {
      const v = get(record);
      const one = Array.isArray(v) ? v.find((x) => !isEmpty(x)) : v;
      return isEmpty(one) || typeof one === 'object' ? undefined : String(one).trim();
    };
  }
  if ('first' in source) {
    const parts = source.first.map(compileExtensionSource);
    return (record) => {
      for (const part of parts) {
        const v = part(record);
        if (v !== undefined) return v;
      }
      return undefined;
    };
  }
  const parts = source.join.map(compileExtensionSource);
  return (record) => {
    const text = parts
      .map((part) => part(record))
      .filter((v) => v !== undefined)
      .join(' ');
    return text === '' ? undefined : text;
  };
}
