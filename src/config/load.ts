// Loads feedsync.yaml (or .json): ${ENV} and ${ENV:-default} interpolation, then the zod schema.
// Every error names the file and the line of the mistake, e.g. `feedsync.yaml:14: feeds[0].keyby is
// not a known key; did you mean keyBy?`, and all of them are reported at once.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import { ConfigError } from '../errors.js';
import { registerEnvSecrets, registerSecretsIn, type EnvValue } from '../secrets.js';
import type { ConfigIssue } from '../errors.js';
import { configIssues, formatPath, type LineOf } from './issues.js';
import { Config, type DefaultedValue, type LoadedConfig } from './schema.js';
import { feedsyncCommand } from '../format/invocation.js';

export { formatPath };

const DEFAULT_CONFIG_FILE = 'feedsync.yaml';

/** Most alias expansions a config may make: a few anchors are a convenience, a billion laughs is an attack. */
const MAX_ALIAS_COUNT = 100;

export async function loadConfig(
  file: string = DEFAULT_CONFIG_FILE,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedConfig> {
  return (await loadConfigWithLines(file, env)).loaded;
}

/** The config and the line of any path in it, for checks made after the schema (config check). */
export async function loadConfigWithLines(
  file: string = DEFAULT_CONFIG_FILE,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ loaded: LoadedConfig; lineOf: LineOf }> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // a first command in a new folder ends here: name the command that writes one
    const init = `\`${feedsyncCommand()} init${file === DEFAULT_CONFIG_FILE ? '' : ` --config ${file}`}\``;
    const why =
      code === 'ENOENT'
        ? `does not exist (looked for ${path}); give its path with --config, or write a starter one with ${init}`
        : (err as Error).message;
    throw new ConfigError(`config file ${file} ${why}`, file);
  }
  const { config, lineOf, defaulted, fromEnv } = parseConfigWithLines(text, file, env);
  return { loaded: { config, file: path, dir: dirname(path), defaulted, fromEnv, lineOf }, lineOf };
}

/** Parse config text (YAML is a superset of JSON, so one parser serves both). */
export function parseConfig(text: string, file = 'config', env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfigWithLines(text, file, env).config;
}

function parseConfigWithLines(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv,
): { config: Config; lineOf: LineOf; defaulted: Map<string, DefaultedValue>; fromEnv: Map<string, string[]> } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  const first = doc.errors[0];
  if (first) throw new ConfigError(`config ${file} is not valid YAML`, file, [yamlIssue(first, text)]);
  const lineOf: LineOf = (path) => lineOfPath(doc.contents, path, lineCounter);
  const js = toPlain(doc, file, lineCounter);

  const refs = new Map<string, { path: PropertyKey[]; typed: number | boolean }>();
  const missing: ConfigIssue[] = [];
  const defaulted = new Map<string, DefaultedValue>();
  const read: InterpolationContext['read'] = [];
  const raw = interpolate(js, [], env, { refs, missing, lineOf, defaulted, read });
  if (missing.length)
    throw new ConfigError(`config ${file} refers to environment variables that are not set`, file, missing);

  const parsed = parseTyped(raw, refs);
  if (!parsed.success)
    throw new ConfigError(`config ${file} is invalid`, file, configIssues(parsed.error, Config, raw, lineOf));
  registerSecretsIn(parsed.data);
  return { config: parsed.data, lineOf, defaulted, fromEnv: fromEnvByName(read, parsed.data) };
}

/**
 * The variables each value was read from, by its path as messages name it: a feed by its name
 * (`feeds[mls].source.bearerToken`), as a refused credential's message names the feed.
 */
function fromEnvByName(read: InterpolationContext['read'], config: Config): Map<string, string[]> {
  return new Map(
    read.map(({ path, variables }) => {
      const [root, index, ...rest] = path;
      const name = root === 'feeds' && typeof index === 'number' ? config.feeds[index]?.name : undefined;
      return [formatPath(name === undefined ? path : [`feeds[${name}]`, ...rest]), variables];
    }),
  );
}

function toPlain(doc: Document.Parsed, file: string, lines: LineCounter): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    if (err instanceof ReferenceError && /alias/i.test(err.message)) {
      const line = firstAliasLine(doc, lines);
      throw new ConfigError(`config ${file} is invalid`, file, [
        {
          path: '',
          line,
          message: `YAML aliases (*name) expand to more than ${MAX_ALIAS_COUNT} copies; write the values out or use fewer aliases`,
        },
      ]);
    }
    throw new ConfigError(`config ${file} cannot be read as YAML: ${(err as Error).message}`, file);
  }
}

function firstAliasLine(doc: Document.Parsed, lines: LineCounter): number | undefined {
  let line: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      line = lineAt(node, lines);
      return visit.BREAK;
    },
  });
  return line;
}

/** One YAML error, with its line and a caret under the column: the first error is the one to fix. */
function yamlIssue(
  err: { message: string; code: string; linePos?: [{ line: number; col: number }, ...unknown[]] },
  source: string,
): ConfigIssue {
  const pos = err.linePos?.[0];
  const what = (err.message.split('\n')[0] ?? err.message).replace(/ at line \d+, column \d+:?$/, '');
  const all = source.split(/\r?\n/);
  const line = pos ? all[pos.line - 1] : undefined;
  // an unquoted ${VAR} in a flow map ({ … }) opens a nested map there: the fix is quotes, not indentation
  const hint =
    line !== undefined && UNQUOTED_VAR.test(line)
      ? `; an unquoted \${VAR} inside a { … } or [ … ] is read as YAML, not as text: quote the value, e.g. clientId: "\${MLS_CLIENT_ID}"`
      : /INDENT|MISSING_CHAR|IMPLICIT_KEY|TAB_AS_INDENT|UNEXPECTED_TOKEN/.test(err.code)
        ? '; check the indentation of this line against the lines above it (spaces only)'
        : '';
  const indent = hint;
  if (!pos) return { path: '', message: `${lower(what)}${indent}` };
  const width = String(pos.line).length;
  const excerpt = [pos.line - 1, pos.line]
    .filter((n) => n >= 1 && n <= all.length)
    .map((n) => `    ${String(n).padStart(width)} | ${all[n - 1]}`);
  excerpt.push(`    ${' '.repeat(width)} | ${' '.repeat(Math.max(0, pos.col - 1))}^`);
  return { path: '', line: pos.line, message: `column ${pos.col}: ${lower(what)}${indent}\n${excerpt.join('\n')}` };
}

/** `${` after a key's colon, a comma or a bracket, not inside quotes */
const UNQUOTED_VAR = /(^|[\s:,{[])\$\{/;

const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

interface InterpolationContext {
  /** values that were a whole `${VAR}` and read as a number or boolean, by JSON path */
  refs: Map<string, { path: PropertyKey[]; typed: number | boolean }>;
  missing: ConfigIssue[];
  lineOf: LineOf;
  /** values a `${VAR:-default}` gave its default, VAR being unset, by path (api.secretKey) */
  defaulted: Map<string, DefaultedValue>;
  /** every value that named a variable, and the variables it named (set or defaulted) */
  read: Array<{ path: PropertyKey[]; variables: string[] }>;
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/;

/** Replace ${VAR} from the environment. Values stay text; see parseTyped for numbers. */
function interpolate(value: unknown, path: PropertyKey[], env: NodeJS.ProcessEnv, ctx: InterpolationContext): unknown {
  if (typeof value === 'string') {
    const filled: EnvValue[] = [];
    const variables: string[] = [];
    let shift = 0; // how much longer the text is than the config's, up to this match
    const replaced = value.replace(ENV_REF, (match: string, name: string, fallback: string | undefined, at: number) => {
      if (!variables.includes(name)) variables.push(name);
      const v = env[name];
      if (v !== undefined && v !== '') {
        filled.push({ variable: name, value: v, at: at + shift });
        shift += v.length - match.length;
        return v;
      }
      shift -= match.length;
      if (fallback !== undefined) {
        shift += fallback.length;
        const line = ctx.lineOf(path);
        ctx.defaulted.set(formatPath(path), { variable: name, ...(line !== undefined && { line }) });
        return fallback;
      }
      const where = formatPath(path);
      ctx.missing.push({
        path: where,
        line: ctx.lineOf(path),
        message: `${where}: environment variable ${name} is not set; set it, or write \${${name}:-default} for a value that is not secret`,
      });
      return '';
    });
    registerEnvSecrets(replaced, filled);
    if (variables.length) ctx.read.push({ path, variables });
    if (WHOLE_REF.test(value)) {
      const typed = /^-?\d+(\.\d+)?$/.test(replaced)
        ? Number(replaced)
        : replaced === 'true' || replaced === 'false'
          ? replaced === 'true'
          : undefined;
      if (typed !== undefined) ctx.refs.set(JSON.stringify(path), { path, typed });
    }
    return replaced;
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, [...path, i], env, ctx));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, [...path, k], env, ctx)]));
  }
  return value;
}

/**
 * The config's parse, made once a process: without zod's JIT (`jitless`), which compiles each object
 * schema's parser the first time it parses (a `new Function` per schema: the config's first parse
 * took 34 ms of CPU with it, 17 ms without, Node 24), for a parse that runs once; schemas parsed
 * often (API pages) keep it.
 */
const ONCE = { reportInput: true, jitless: true } as const;

/**
 * Parse, giving `${PORT}` the number (or boolean) it reads as only where the schema wants a number
 * (or boolean): a secret of all digits given as `${SECRET}` stays the text it is.
 */
function parseTyped(raw: unknown, refs: InterpolationContext['refs']) {
  let parsed = Config.safeParse(raw, ONCE);
  for (let round = 0; round < 3 && !parsed.success; round++) {
    let changed = false;
    for (const issue of parsed.error.issues) {
      const ref = refs.get(JSON.stringify(issue.path));
      if (!ref || issue.code !== 'invalid_type') continue;
      const wanted =
        issue.expected === 'boolean' ? 'boolean' : ['number', 'int'].includes(issue.expected) ? 'number' : undefined;
      if (wanted && typeof ref.typed === wanted) changed = setAt(raw, ref.path, ref.typed) || changed;
    }
    if (!changed) break;
    parsed = Config.safeParse(raw, ONCE);
  }
  return parsed;
}

function setAt(root: unknown, path: PropertyKey[], value: unknown): boolean {
  let cur = root as Record<PropertyKey, unknown>;
  for (const key of path.slice(0, -1)) cur = cur[key] as Record<PropertyKey, unknown>;
  const last = path.at(-1);
  if (last === undefined || cur[last] === value) return false;
  cur[last] = value;
  return true;
}

/** The line of `path` in the document: the key's own line, else the deepest parent that exists. */
function lineOfPath(
  root: Node | null | undefined,
  path: ReadonlyArray<PropertyKey>,
  lines: LineCounter,
): number | undefined {
  let node: unknown = root;
  let found = lineAt(node, lines);
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(key));
      if (!pair) return found;
      found = lineAt(pair.key, lines) ?? found;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key];
      found = lineAt(node, lines) ?? found;
    } else {
      return found;
    }
  }
  return found;
}

function lineAt(node: unknown, lines: LineCounter): number | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range ? lines.linePos(range[0]).line : undefined;
}
