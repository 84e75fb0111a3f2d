// Loads feedsync.yaml (or .json): ${ENV} and ${ENV:-default} interpolation, then the zod schema.
// Errors name the path in the file and its line, e.g. `feedsync.yaml:14 feeds[0].keyBy: ...`.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { registerSecret } from '../log.js';
import { Config, type LoadedConfig } from './schema.js';

export const DEFAULT_CONFIG_FILE = 'feedsync.yaml';

export async function loadConfig(file: string = DEFAULT_CONFIG_FILE, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`config file ${file} cannot be read: ${(err as Error).message}`, file);
  }
  return { config: parseConfig(text, file, env), file: path, dir: dirname(path) };
}

/** Parse config text (YAML is a superset of JSON, so one parser serves both). */
export function parseConfig(text: string, file = 'config', env: NodeJS.ProcessEnv = process.env): Config {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length) {
    throw new ConfigError(
      `config ${file} is not valid YAML`,
      file,
      doc.errors.map((e) => ({ path: `line ${e.linePos?.[0]?.line ?? '?'}`, message: e.message.split('\n')[0] ?? e.message })),
    );
  }
  const missing: string[] = [];
  const raw = interpolate(doc.toJS(), env, missing);
  if (missing.length) {
    throw new ConfigError(
      `config ${file} refers to environment variables that are not set: ${[...new Set(missing)].join(', ')}`,
      file,
    );
  }
  const parsed = Config.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(`config ${file} is invalid`, file, issuesWithLines(parsed.error, doc.contents, lineCounter));
  }
  registerSecret(parsed.data.api.secretKey);
  registerSecret(parsed.data.api.sessionKey);
  for (const feed of parsed.data.feeds) {
    registerSecret(feed.source.bearerToken);
    for (const [name, value] of Object.entries(feed.source.headers)) {
      if (/authorization|token|key|secret/i.test(name)) registerSecret(value.replace(/^Bearer\s+/i, ''));
    }
  }
  return parsed.data;
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function interpolate(value: unknown, env: NodeJS.ProcessEnv, missing: string[]): unknown {
  if (typeof value === 'string') {
    const whole = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/.exec(value);
    const replaced = value.replace(ENV_REF, (_m, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      missing.push(name);
      return '';
    });
    // "${PORT}" alone keeps the type YAML would have given the value written inline.
    if (whole && /^-?\d+(\.\d+)?$/.test(replaced)) return Number(replaced);
    if (whole && (replaced === 'true' || replaced === 'false')) return replaced === 'true';
    return replaced;
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env, missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, missing)]));
  }
  return value;
}

function issuesWithLines(error: z.ZodError, root: Node | null | undefined, lines: LineCounter) {
  return error.issues.map((issue) => {
    const path = formatPath(issue.path);
    const line = lineOf(root, issue.path, lines);
    return { path: line ? `line ${line}: ${path}` : path, message: issue.message };
  });
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)), '');
}

/** The line of the deepest node of `path` that exists in the document. */
function lineOf(root: Node | null | undefined, path: ReadonlyArray<PropertyKey>, lines: LineCounter): number | undefined {
  let node: unknown = root;
  let found: number | undefined;
  for (const key of path) {
    const start = rangeStart(node);
    if (start !== undefined) found = lines.linePos(start).line;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(key));
      if (!pair) return found;
      const keyStart = rangeStart(pair.key);
      if (keyStart !== undefined) found = lines.linePos(keyStart).line;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key];
    } else {
      return found;
    }
  }
  const start = rangeStart(node);
  return start !== undefined ? lines.linePos(start).line : found;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range?.[0];
}
