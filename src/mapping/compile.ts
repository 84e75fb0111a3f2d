// Compiles a feed's mapping (preset rules overlaid by the user's) into one function from raw record
// to listing candidate. Everything that can be decided once — paths, transforms, value maps — is
// decided here, so mapping a record is a handful of closure calls (the hot path of a 200k feed).
import type { ValidationIssue } from '../errors.js';
import { LISTING_FIELDS, type ListingField } from '../listing/schema.js';
import type { FieldRuleObject, MappingConfig } from './config-schema.js';
import { compilePath, isEmpty, type Getter } from './paths.js';
import { PRESETS } from './presets/registry.js';
import { compileTransform, TransformFailure, unitConverter, type Transform } from './transforms.js';

export interface MapResult {
  /** the listing as mapped, before validation (SerialNumber included) */
  candidate: Record<string, unknown>;
  /** rules that failed while mapping (a number that is not one, ...) */
  issues: ValidationIssue[];
  /** set when a rule's skip list matched: the record stays out of the feed */
  skip?: string;
}

export interface CompiledMapping {
  map(record: Record<string, unknown>, serialNumber: string): MapResult;
  /** the listing key (MLSNumber or Url as mapped) of a record, without validating it */
  keyOf(record: Record<string, unknown>, keyBy: 'MLSNumber' | 'URL'): string | undefined;
  /** the effective rules, preset and user merged (for preview and docs) */
  rules: Partial<Record<ListingField, FieldRuleObject>>;
}

const NUMERIC_FIELDS = new Set<string>([
  'Bedrooms', 'Bathrooms', 'YearBuilt', 'DaysOnMarket', 'LotArea', 'BuildingArea', 'ParkingSpots',
  'Latitude', 'Longitude', 'SalePrice', 'UnitAreaPrice', 'HOAMonth', 'ZestimatePrice', 'RentPrice', 'DepositFee',
]);

type FieldFn = (record: Record<string, unknown>, out: Record<string, unknown>, result: MapResult) => void;

export function compileMapping(config: MappingConfig, options: { now?: () => Date } = {}): CompiledMapping {
  const now = options.now ?? (() => new Date());
  const preset = config.preset ? PRESETS[config.preset] : undefined;
  const rules: Partial<Record<ListingField, FieldRuleObject>> = { ...preset?.fields };
  for (const [field, rule] of Object.entries(config.fields) as [ListingField, FieldRuleObject | null][]) {
    if (rule === null) delete rules[field];
    else rules[field] = rule;
  }
  const defaults = { ...preset?.defaults, ...config.defaults } as Record<string, unknown>;

  // fields are filled in the spec's order, so the candidate's keys already are in the order the
  // validated listing has (validateListing can then hand the same object on)
  const steps: [ListingField, FieldFn][] = [];
  for (const [field, rule] of Object.entries(rules) as [ListingField, FieldRuleObject][]) {
    steps.push([field, compileField(field, rule, defaults[field], now)]);
  }
  for (const [field, value] of Object.entries(defaults) as [ListingField, unknown][]) {
    if (!(field in rules)) steps.push([field, (_r, out) => void (out[field] = value)]);
  }
  const extension = compileExtension(config.extension, preset?.extension);
  if (extension) {
    steps.push(['ExtensionColumn', (record, out) => {
      const entries = extension(record);
      if (entries.length) out.ExtensionColumn = [...((out.ExtensionColumn as unknown[] | undefined) ?? []), ...entries];
    }]);
  }
  const order = (f: ListingField) => LISTING_FIELDS.indexOf(f);
  // a stable sort keeps an ExtensionColumn rule before the extension entries
  const fieldFns = steps.sort((a, b) => order(a[0]) - order(b[0])).map(([, fn]) => fn);

  const keyGetters = {
    MLSNumber: rules.MLSNumber ? valueGetter('MLSNumber', rules.MLSNumber, now) : () => defaults.MLSNumber,
    URL: rules.Url ? valueGetter('Url', rules.Url, now) : () => defaults.Url,
  };

  return {
    rules,
    map(record, serialNumber) {
      const candidate: Record<string, unknown> = { SerialNumber: serialNumber };
      const result: MapResult = { candidate, issues: [] };
      for (const fn of fieldFns) fn(record, candidate, result);
      return result;
    },
    keyOf(record, keyBy) {
      try {
        const v = keyGetters[keyBy](record);
        return isEmpty(v) ? undefined : String(v).trim();
      } catch {
        return undefined;
      }
    },
  };
}

function compileSource(rule: FieldRuleObject): Getter | undefined {
  const froms = rule.from === undefined ? [] : Array.isArray(rule.from) ? rule.from : [rule.from];
  const getters = froms.map(compilePath);
  const template = rule.template ? compileTemplate(rule.template) : undefined;
  if (getters.length === 1 && !template) return getters[0];
  if (getters.length === 0 && !template) return undefined;
  return (record) => {
    for (const g of getters) {
      const v = g(record);
      if (!isEmpty(v)) return v;
    }
    return template?.(record);
  };
}

/** `https://broker.test/l/{ListingId}`: empty when any placeholder is empty (a half-made URL is worse than none). */
function compileTemplate(template: string): Getter {
  const parts = template.split(/\{([^{}]+)\}/);
  const pieces = parts.map((p, i) => (i % 2 ? compilePath(p.trim()) : p));
  return (record) => {
    let s = '';
    for (const piece of pieces) {
      if (typeof piece === 'string') s += piece;
      else {
        const v = piece(record);
        if (isEmpty(v)) return undefined;
        s += encodeURIComponent(String(Array.isArray(v) ? v[0] : v).trim()).replace(/%20/g, '+');
      }
    }
    return s;
  };
}

/** The value pipeline of one field without the skip check: source, transforms, map, unit, final shape. */
function valueGetter(field: ListingField, rule: FieldRuleObject, now: () => Date): Getter {
  const fn = compileField(field, rule, undefined, now);
  return (record) => {
    const out: Record<string, unknown> = {};
    const result: MapResult = { candidate: out, issues: [] };
    fn(record, out, result);
    return out[field];
  };
}

function compileField(field: ListingField, rule: FieldRuleObject, fallback: unknown, now: () => Date): FieldFn {
  const source = compileSource(rule);
  const transforms: Transform[] = (rule.transform ?? []).map((t) => compileTransform(t, now));
  const explicitNumber = (rule.transform ?? []).some((t) => ['number', 'integer', 'money', 'days-since'].includes(t.name));
  // A plain `Bedrooms: Beds` rule still yields a number: numeric fields get the number transform implied.
  if (NUMERIC_FIELDS.has(field) && !explicitNumber && !rule.map) transforms.push(compileTransform({ name: 'number' }, now));
  const skip = rule.skip ? new Set(rule.skip.map((s) => s.toLowerCase())) : undefined;
  const map = rule.map ? compileValueMap(rule.map) : undefined;
  const unit = rule.unit && rule.unit.from !== rule.unit.to ? unitConverter(rule.unit.from, rule.unit.to) : undefined;
  const dflt = rule.default ?? fallback;
  const shape =
    field === 'Images' ? toList : field === 'ExtensionColumn' ? (v: unknown) => v : NUMERIC_FIELDS.has(field) ? toScalar : toText;
  const label = rule.from === undefined ? field : Array.isArray(rule.from) ? rule.from.join('|') : rule.from;

  const general: FieldFn = (record, out, result) => {
    let v = source ? source(record) : undefined;
    if (isEmpty(v)) {
      if (dflt !== undefined) out[field] = dflt;
      return;
    }
    try {
      if (typeof v === 'string') v = v.trim();
      for (const t of transforms) {
        if (skip && skip.has(String(v).toLowerCase())) break;
        v = t(v);
      }
      if (skip && skip.has(String(v).toLowerCase())) {
        result.skip ??= `${label} is ${JSON.stringify(v)}: off the market`;
        return;
      }
      if (map) v = map(v);
      if (unit) v = unit(v);
      out[field] = shape(v);
    } catch (err) {
      if (!(err instanceof TransformFailure)) throw err;
      result.issues.push({ field, value: v, rule: err.message });
    }
  };
  // Most rules just copy a column: a text value with nothing to trim, or a plain decimal number.
  // Those take a short path; everything else goes the general way above.
  const plain = source && !rule.transform?.length && !map && !skip && !unit && field !== 'Images' && field !== 'ExtensionColumn';
  if (!plain) return general;
  if (NUMERIC_FIELDS.has(field)) {
    return (record, out, result) => {
      const v = source(record);
      if (typeof v === 'string' && PLAIN_NUMBER.test(v)) out[field] = Number(v);
      else general(record, out, result);
    };
  }
  return (record, out, result) => {
    const v = source(record);
    if (typeof v === 'string' && v.length > 0 && v.charCodeAt(0) > 32 && v.charCodeAt(v.length - 1) > 32) out[field] = v;
    else general(record, out, result);
  };
}

const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

function compileValueMap(map: Record<string, string | number | boolean>): Transform {
  const exact = new Map(Object.entries(map));
  const folded = new Map(Object.entries(map).map(([k, v]) => [k.trim().toLowerCase(), v]));
  // "*" maps every value not listed; without it such values pass through (and validation judges them)
  const other = map['*'];
  return (v) => {
    if (Array.isArray(v)) v = v[0];
    const s = String(v);
    return exact.get(s) ?? folded.get(s.trim().toLowerCase()) ?? other ?? v;
  };
}

function toList(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => !isEmpty(x)).map((x) => String(x).trim());
  return String(v).split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** Text fields take numbers as text: a RESO PostalCode or MLS number may come as a JSON number. */
function toText(v: unknown): unknown {
  const x = toScalar(v);
  return typeof x === 'number' || typeof x === 'boolean' ? String(x) : x;
}

function toScalar(v: unknown): unknown {
  const x = Array.isArray(v) ? v[0] : v;
  return typeof x === 'string' ? x.trim() : x;
}

function compileExtension(
  config: MappingConfig['extension'],
  presetExtension: Record<string, string> | undefined,
): ((record: Record<string, unknown>) => { Key: string; value: string }[]) | undefined {
  const pairs: [string, string][] = Array.isArray(config) ? config.map((p) => [p, p]) : Object.entries(config);
  const all = [...Object.entries(presetExtension ?? {}), ...pairs];
  if (!all.length) return undefined;
  const getters = all.map(([key, path]) => [key, compilePath(path)] as const);
  return (record) => {
    const out: { Key: string; value: string }[] = [];
    for (const [Key, get] of getters) {
      const v = get(record);
      if (isEmpty(v)) continue;
      out.push({ Key, value: Array.isArray(v) ? v.filter((x) => !isEmpty(x)).join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v).trim() });
    }
    return out;
  };
}
