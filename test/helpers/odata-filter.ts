// The part of OData's $filter and $orderby that RESO clients send: comparisons (eq ne gt ge lt le)
// of a field with a literal ('text', numbers, unquoted ISO timestamps, null, true, false), joined by
// and / or / not and parentheses. Timestamps compare as instants, or as text for a server that
// compares them as text (the field notes: some do).

export type Row = Record<string, unknown>;
export type Predicate = (row: Row) => boolean;

export class ODataSyntaxError extends Error {}

interface CompareOptions {
  textTimestamps?: boolean;
  /** text compares case-insensitively (SQL Server's default collation), in $filter and $orderby alike */
  caseInsensitive?: boolean;
  /** fields the server knows: a filter on any other is a 400, as on a real server */
  known?: (field: string) => boolean;
  /** a field's Edm type by the server's $metadata: a numeric field compared with a quoted literal is a 400, as on a real server */
  types?: (field: string) => string | undefined;
}

const NUMERIC = /^Edm\.(Int16|Int32|Int64|Byte|SByte|Decimal|Double|Single)$/;
const OPERATOR_KIND: Record<string, string> = {
  eq: 'Equal',
  ne: 'NotEqual',
  gt: 'GreaterThan',
  ge: 'GreaterThanOrEqual',
  lt: 'LessThan',
  le: 'LessThanOrEqual',
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

type Token = { kind: 'open' | 'close' } | { kind: 'string'; value: string } | { kind: 'word'; value: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '(') {
      out.push({ kind: 'open' });
      i++;
    } else if (c === ')') {
      out.push({ kind: 'close' });
      i++;
    } else if (c === "'") {
      let s = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new ODataSyntaxError('unterminated string literal');
        if (text[i] === "'" && text[i + 1] === "'") {
          s += "'";
          i += 2;
        } else if (text[i] === "'") break;
        else s += text[i++];
      }
      i++;
      out.push({ kind: 'string', value: s });
    } else {
      const m = /^[^\s()']+/.exec(text.slice(i))!;
      out.push({ kind: 'word', value: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

export function compileFilter(text: string, opts: CompareOptions = {}): Predicate {
  const tokens = tokenize(text);
  let pos = 0;
  const peekWord = () => {
    const t = tokens[pos];
    return t?.kind === 'word' ? t.value.toLowerCase() : undefined;
  };
  const or = (): Predicate => {
    let left = and();
    while (peekWord() === 'or') {
      pos++;
      const l = left,
        r = and();
      left = (row) => l(row) || r(row);
    }
    return left;
  };
  const and = (): Predicate => {
    let left = not();
    while (peekWord() === 'and') {
      pos++;
      const l = left,
        r = not();
      left = (row) => l(row) && r(row);
    }
    return left;
  };
  const not = (): Predicate => {
    if (peekWord() === 'not') {
      pos++;
      const inner = not();
      return (row) => !inner(row);
    }
    return primary();
  };
  const primary = (): Predicate => {
    if (tokens[pos]?.kind === 'open') {
      pos++;
      const inner = or();
      if (tokens[pos]?.kind !== 'close') throw new ODataSyntaxError('missing )');
      pos++;
      return inner;
    }
    const field = tokens[pos++];
    const op = tokens[pos++];
    const literal = tokens[pos++];
    if (
      field?.kind !== 'word' ||
      op?.kind !== 'word' ||
      !literal ||
      literal.kind === 'open' ||
      literal.kind === 'close'
    ) {
      throw new ODataSyntaxError(`expected <field> <op> <value> at token ${pos - 3}`);
    }
    if (opts.known && !opts.known(field.value))
      throw new ODataSyntaxError(`Could not find a property named '${field.value}'`);
    const type = opts.types?.(field.value);
    if (type && NUMERIC.test(type) && literal.kind === 'string') {
      // (ASP.NET OData's words, behind many RESO servers)
      throw new ODataSyntaxError(
        `A binary operator with incompatible types was detected. Found operand types '${type}' and 'Edm.String' for operator kind '${OPERATOR_KIND[op.value.toLowerCase()] ?? op.value}'.`,
      );
    }
    const value =
      literal.kind === 'string' ? literal.value : literal.kind === 'word' ? parseWord(literal.value) : undefined;
    const cmp = comparison(op.value.toLowerCase());
    return (row) => cmp(compareValues(row[field.value], value, opts), row[field.value], value);
  };
  const predicate = or();
  if (pos !== tokens.length) throw new ODataSyntaxError(`unexpected token at ${pos}`);
  return predicate;
}

function parseWord(w: string): unknown {
  if (w === 'null') return null;
  if (w === 'true') return true;
  if (w === 'false') return false;
  if (ISO.test(w)) return w;
  if (/^-?\d+(\.\d+)?$/.test(w)) return Number(w);
  throw new ODataSyntaxError(`not a literal: ${w}`);
}

function comparison(op: string): (c: number | undefined, a: unknown, b: unknown) => boolean {
  switch (op) {
    case 'eq':
      return (c, a, b) => (a === null || a === undefined || b === null ? (a ?? null) === b : c === 0);
    case 'ne':
      return (c, a, b) => (a === null || a === undefined || b === null ? (a ?? null) !== b : c !== 0);
    case 'gt':
      return (c) => c !== undefined && c > 0;
    case 'ge':
      return (c) => c !== undefined && c >= 0;
    case 'lt':
      return (c) => c !== undefined && c < 0;
    case 'le':
      return (c) => c !== undefined && c <= 0;
    default:
      throw new ODataSyntaxError(`unknown operator ${op}`);
  }
}

/** <0, 0, >0; undefined when either side is null (a null compares to nothing). */
export function compareValues(a: unknown, b: unknown, opts: CompareOptions = {}): number | undefined {
  if (a === null || a === undefined || b === null || b === undefined) return undefined;
  if (!opts.textTimestamps && typeof a === 'string' && typeof b === 'string' && ISO.test(a) && ISO.test(b)) {
    const d = Date.parse(a) - Date.parse(b);
    if (!Number.isNaN(d)) return d; // a stamp that does not parse ("0000-00-00T00:00:00Z") compares as text
  }
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = opts.caseInsensitive ? String(a).toLowerCase() : String(a),
    y = opts.caseInsensitive ? String(b).toLowerCase() : String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `$orderby=ModificationTimestamp,ListingKey desc` as a comparator (nulls first, as OData orders them). */
export function compileOrderBy(text: string, opts: CompareOptions = {}): (a: Row, b: Row) => number {
  const keys = text.split(',').map((part) => {
    const [field, dir] = part.trim().split(/\s+/);
    if (!field) throw new ODataSyntaxError('empty $orderby');
    if (opts.known && !opts.known(field)) throw new ODataSyntaxError(`Could not find a property named '${field}'`);
    return { field, sign: dir?.toLowerCase() === 'desc' ? -1 : 1 };
  });
  return (a, b) => {
    for (const { field, sign } of keys) {
      const x = a[field],
        y = b[field];
      const c =
        x === y
          ? 0
          : x === null || x === undefined
            ? -1
            : y === null || y === undefined
              ? 1
              : compareValues(x, y, opts)!;
      if (c) return c * sign;
    }
    return 0;
  };
}
