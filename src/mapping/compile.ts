// Compiles a feed's mapping (preset rules overlaid by the user's) into one function from raw record
// to listing candidate. Everything that can be decided once — paths, transforms, value maps — is
// decided here, so mapping a record is a handful of closure calls (the hot path of a 200k feed).
import { isPlainText } from '../listing/validate.js';
import type { ValidationIssue } from '../errors.js';
import { LISTING_FIELDS, type ListingField } from '../listing/schema.js';
import {
  AREA_UNIT_NAMES,
  type FieldRuleObject,
  type ListCondition,
  type ListRule,
  type MappingConfig,
  type UnitRule,
} from './config-schema.js';
import { foldLookup, parseAreaUnit, paymentsAMonth, type AreaUnitName } from './lookup.js';
import { compilePath, isEmpty, type Getter } from './paths.js';
import { presetNamed } from './presets/registry.js';
import { CLOCK_TRANSFORMS, compileTransform, convertArea, TransformFailure, type Transform } from './transforms.js';
import type { DisplayRules } from './display-config.js';
import { compileDisplay, type DisplayEvaluator } from './display-rules.js';
import { compileExtensionSource, extensionPaths, type ExtensionSource } from './extension-source.js';
import { restrictedOf } from './restricted-fields.js';
import { compileOpenHouses } from './open-houses.js';
import { ownString } from '../feeds/own-string.js';

export interface MapResult {
  /** the listing as mapped, before validation (SerialNumber included) */
  candidate: Record<string, unknown>;
  /** rules that failed while mapping (a number that is not one, ...) */
  issues: ValidationIssue[];
  /** set when a rule's skip list matched: the record stays out of the feed */
  skip?: string;
}

/** A source value that a rule's `map` has no entry for (and no "*"): it passes through unmapped. */
export interface UnmappedValue {
  field: ListingField;
  /** the rule's source path(s), as configured */
  from: string;
  value: string;
}

export interface CompileOptions {
  now?: () => Date;
  /** told of every value a `map` does not cover (feed preview counts them) */
  onUnmapped?: (u: UnmappedValue) => void;
  /** the feed's display rules (display-config.ts): applied to each record before and after it is mapped (map-feed.ts) */
  display?: DisplayRules;
  /** the record's open houses (source.expandOpenHouse, or source.related: [OpenHouse]) become Tours and an ExtensionColumn entry, times in this IANA zone (open-houses.ts) */
  openHouses?: { timeZone: string };
}

/** MapResult while a record is mapped: steps that need the whole listing (units, `when`) run last. */
interface Working extends MapResult {
  after: Array<() => void>;
}

export interface CompiledMapping {
  map(record: Record<string, unknown>, serialNumber: string): MapResult;
  /** the listing key (MLSNumber or Url as mapped) of a record, without validating it */
  keyOf(record: Record<string, unknown>, keyBy: 'MLSNumber' | 'URL'): string | undefined;
  /**
   * The column the key is read from when its rule only copies one (`MLSNumber: ListingId`): keyOf
   * then gives that column's text as keyOfText does. Undefined for any other rule: ask keyOf.
   */
  keyColumn: Readonly<Record<'MLSNumber' | 'URL', string | undefined>>;
  /** the effective rules, preset and user merged (for preview and docs) */
  rules: Partial<Record<ListingField, FieldRuleObject>>;
  /** fields whose rule reads the clock (days-since): the same record maps them differently from one run to the next */
  clockFields: ListingField[];
  /** `onInvalid: default`: the value that replaces a field's value when it breaks the rules */
  replacements: ReadonlyMap<ListingField, unknown>;
  /** the feed's display rules as a function of a record; none when they do nothing (internal, no attribution) */
  display?: DisplayEvaluator;
  /** the purpose the display rules were compiled for (internal when none were given) */
  purpose: DisplayRules['purpose'];
  /**
   * `onInvalid: default` with several sources: the field's value from each source alone, in the
   * rule's order (the template last), each through the rule's pipeline against the listing mapped
   * so far; undefined where that source is empty or its value fails a transform. Tried before the
   * default (map-feed.ts).
   */
  sourceValues(
    field: ListingField,
    record: Record<string, unknown>,
    candidate: Readonly<Record<string, unknown>>,
  ): Iterable<unknown>;
}

const NUMERIC_FIELDS = new Set<string>([
  'Bedrooms',
  'Bathrooms',
  'YearBuilt',
  'DaysOnMarket',
  'LotArea',
  'BuildingArea',
  'ParkingSpots',
  'Latitude',
  'Longitude',
  'SalePrice',
  'UnitAreaPrice',
  'HOAMonth',
  'ZestimatePrice',
  'RentPrice',
  'DepositFee',
]);

type FieldFn = (record: Record<string, unknown>, out: Record<string, unknown>, result: Working) => void;
type Hooks = Required<Pick<CompileOptions, 'now'>> & Pick<CompileOptions, 'onUnmapped'>;

/** The field rules a mapping applies: its preset's, overlaid by its own (`null` removes one). */
export function mergedRules(config: MappingConfig): Partial<Record<ListingField, FieldRuleObject>> {
  const rules: Partial<Record<ListingField, FieldRuleObject>> = {
    ...(config.preset ? presetNamed(config.preset).fields : undefined),
  };
  for (const [field, rule] of Object.entries(config.fields) as [ListingField, FieldRuleObject | null][]) {
    if (rule === null) delete rules[field];
    else rules[field] = rule;
  }
  return rules;
}

export function compileMapping(config: MappingConfig, options: CompileOptions = {}): CompiledMapping {
  const now = options.now ?? (() => new Date());
  const hooks = { now, onUnmapped: options.onUnmapped };
  const preset = config.preset ? presetNamed(config.preset) : undefined;
  const rules = mergedRules(config);
  const defaults = { ...preset?.defaults, ...config.defaults } as Record<string, unknown>;

  const fieldFns = compileSteps(config, rules, defaults, options, hooks);

  const keyGetters = {
    MLSNumber: rules.MLSNumber ? valueGetter('MLSNumber', rules.MLSNumber, { now }) : () => defaults.MLSNumber,
    URL: rules.Url ? valueGetter('Url', rules.Url, { now }) : () => defaults.Url,
  };

  const keyColumn = { MLSNumber: copiedColumn(rules.MLSNumber), URL: copiedColumn(rules.Url) };

  const replacements = replacementsOf(rules, defaults);
  const display = options.display ? compileDisplay(options.display, now) : undefined;
  const alone = alternateSources(rules, replacements, hooks);
  return {
    rules,
    replacements,
    ...(display && { display }),
    purpose: options.display?.purpose ?? 'internal',
    *sourceValues(field, record, candidate) {
      for (const fn of alone.get(field) ?? []) {
        const out: Record<string, unknown> = { ...candidate };
        delete out[field];
        const result = runAlone(fn, record, out);
        yield result.issues.length || result.skip !== undefined ? undefined : out[field];
      }
    },
    clockFields: (Object.entries(rules) as [ListingField, FieldRuleObject | undefined][])
      .filter(([, r]) => r?.transform?.some((t) => CLOCK_TRANSFORMS.has(t.name)))
      .map(([f]) => f),
    map(record, serialNumber) {
      const candidate: Record<string, unknown> = { SerialNumber: serialNumber };
      const result: Working = { candidate, issues: [], after: [] };
      for (const fn of fieldFns) fn(record, candidate, result);
      for (const step of result.after) step();
      const { after: _, ...done } = result;
      return done;
    },
    keyColumn,
    keyOf(record, keyBy) {
      try {
        const v = keyGetters[keyBy](record);
        // (its own string: a run keeps every key, and a key cut from the feed's text would keep that text)
        return isEmpty(v) ? undefined : ownString(String(v).trim());
      } catch {
        return undefined; // (a key rule that throws on this record gives no key: mapping the record reports the rule's issue)
      }
    },
  };
}

/** Each field's step, in the spec's order: its rule, else its default, then the extension and open-house entries. */
function compileSteps(
  config: MappingConfig,
  rules: Partial<Record<ListingField, FieldRuleObject>>,
  defaults: Record<string, unknown>,
  options: CompileOptions,
  hooks: Hooks,
): FieldFn[] {
  const preset = config.preset ? presetNamed(config.preset) : undefined;
  // fields are filled in the spec's order, so the candidate's keys already are in the order the
  // validated listing has (validateListing can then hand the same object on)
  const steps: [ListingField, FieldFn][] = [];
  for (const [field, rule] of Object.entries(rules) as [ListingField, FieldRuleObject][]) {
    steps.push([field, compileField(field, rule, defaults[field], hooks)]);
  }
  for (const [field, value] of Object.entries(defaults) as [ListingField, unknown][]) {
    if (!(field in rules)) steps.push([field, (_r, out) => void (out[field] = value)]);
  }
  const extension = compileExtension(
    config.extension,
    preset?.extension,
    options.display ? restrictedOf(options.display) : new Map(),
  );
  if (extension) {
    steps.push([
      'ExtensionColumn',
      (record, out) => {
        const entries = extension(record);
        if (entries.length)
          out.ExtensionColumn = [...((out.ExtensionColumn as unknown[] | undefined) ?? []), ...entries];
      },
    ]);
  }
  if (options.openHouses && preset?.openHouses) {
    // after the extension step: the agent entries come first
    const openHouses = compileOpenHouses(preset.openHouses, options.openHouses.timeZone, hooks.now);
    steps.push(['ExtensionColumn', (record, out) => openHouses(record, out)]);
  }
  const order = (f: ListingField) => LISTING_FIELDS.indexOf(f);
  // a stable sort keeps an ExtensionColumn rule before the extension entries
  return steps.sort((a, b) => order(a[0]) - order(b[0])).map(([, fn]) => fn);
}

/** `onInvalid: default`: the value that replaces each such field's value when it breaks the rules. */
function replacementsOf(
  rules: Partial<Record<ListingField, FieldRuleObject>>,
  defaults: Record<string, unknown>,
): Map<ListingField, unknown> {
  const replacements = new Map<ListingField, unknown>();
  for (const [field, rule] of Object.entries(rules) as [ListingField, FieldRuleObject][]) {
    const value = rule.default ?? defaults[field];
    if (rule.onInvalid === 'default' && value !== undefined) replacements.set(field, value);
  }
  return replacements;
}

/**
 * The column a rule copies as it is (one top-level name, nothing else done to it: no transform,
 * map, skip, template, default or condition), else undefined. A text field's value is then the
 * column's text trimmed, none when blank (keyOfText).
 */
function copiedColumn(rule: FieldRuleObject | undefined): string | undefined {
  if (!rule) return undefined;
  const { from, onInvalid: _, ...rest } = rule;
  const name = Array.isArray(from) ? (from.length === 1 ? from[0] : undefined) : from;
  if (name === undefined || name.includes('.') || Object.values(rest).some((v) => v !== undefined)) return undefined;
  return name;
}

/** The key keyOf gives for a record whose key column (CompiledMapping.keyColumn) holds `text`. */
export function keyOfText(text: string): string | undefined {
  // (trim() drops more than isEmpty's blanks, a BOM or a no-break space: the value trimmed decides)
  const key = text.trim();
  return key === '' ? undefined : ownString(key);
}

/** Each source of an `onInvalid: default` rule with more than one, compiled alone (no default: an empty source gives nothing). */
function alternateSources(
  rules: Partial<Record<ListingField, FieldRuleObject>>,
  replacements: ReadonlyMap<ListingField, unknown>,
  hooks: Hooks,
): Map<ListingField, FieldFn[]> {
  const out = new Map<ListingField, FieldFn[]>();
  for (const field of replacements.keys()) {
    const rule = rules[field]!;
    const froms = rule.from === undefined ? [] : Array.isArray(rule.from) ? rule.from : [rule.from];
    const alone = [
      ...froms.map((from) => ({ ...rule, from, template: undefined })),
      ...(rule.template ? [{ ...rule, from: undefined }] : []),
    ];
    if (alone.length > 1)
      out.set(
        field,
        alone.map((r) => compileValue(field, { ...r, default: undefined }, undefined, hooks)),
      );
  }
  return out;
}

function compileSource(rule: FieldRuleObject): Getter | undefined {
  const froms = rule.from === undefined ? [] : Array.isArray(rule.from) ? rule.from : [rule.from];
  const getters = froms.map((from) => compilePath(from));
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
function valueGetter(field: ListingField, rule: FieldRuleObject, hooks: Hooks): Getter {
  const fn = compileField(field, rule, undefined, hooks);
  return (record) => {
    const out: Record<string, unknown> = {};
    const result: Working = { candidate: out, issues: [], after: [] };
    fn(record, out, result);
    return out[field];
  };
}

/**
 * One source of a rule alone against the listing mapped so far, with the steps it leaves for the
 * whole listing (its value converted to AreaUnit): the next source a rule falls back to is brought
 * to the listing's unit from its own unit, as the rule's first choice is (issue 54).
 */
function runAlone(fn: FieldFn, record: Record<string, unknown>, out: Record<string, unknown>): Working {
  const result: Working = { candidate: out, issues: [], after: [] };
  fn(record, out, result);
  for (const step of result.after) step();
  return result;
}

function compileField(field: ListingField, rule: FieldRuleObject, fallback: unknown, hooks: Hooks): FieldFn {
  const fn = compileValue(field, rule, fallback, hooks);
  return rule.when ? onlyWhen(field, rule.when, fn) : fn;
}

function compileValue(field: ListingField, rule: FieldRuleObject, fallback: unknown, hooks: Hooks): FieldFn {
  const pipeline = compilePipeline(field, rule, fallback, hooks);
  const general = generalPath(field, pipeline);
  return plainPath(field, rule, pipeline, general) ?? general;
}

/** A rule's steps, each decided once: source, list, transforms, skip, map, unit, default and final shape. */
interface Pipeline {
  label: string;
  unit: CompiledUnit | undefined;
  perMonth: PerMonth | undefined;
  source: Getter | undefined;
  list: Transform | undefined;
  transforms: Transform[];
  skip: Set<string> | undefined;
  map: Transform | undefined;
  dflt: unknown;
  shape: (v: unknown) => unknown;
  set: (out: Record<string, unknown>, v: unknown) => void;
}

function compilePipeline(field: ListingField, rule: FieldRuleObject, fallback: unknown, hooks: Hooks): Pipeline {
  const label = rule.from === undefined ? field : Array.isArray(rule.from) ? rule.from.join('|') : rule.from;
  const unit = rule.unit ? compileUnit(rule, rule.unit) : undefined;
  const onUnmapped = hooks.onUnmapped && ((value: string) => hooks.onUnmapped!({ field, from: label, value }));
  return {
    label,
    unit,
    perMonth: rule.per ? compilePerMonth(field, rule.per.from, hooks) : undefined,
    source: unit?.source ?? compileSource(rule),
    list: rule.list ? compileList(rule.list) : undefined,
    transforms: compileTransforms(field, rule, hooks),
    skip: rule.skip ? new Set(rule.skip.map(foldLookup)) : undefined,
    map: rule.map ? compileValueMap(rule.map, onUnmapped) : undefined,
    dflt: rule.default ?? fallback,
    shape: shapeOf(field),
    set: propertyWriter(field),
  };
}

function compileTransforms(field: ListingField, rule: FieldRuleObject, hooks: Hooks): Transform[] {
  const transforms: Transform[] = (rule.transform ?? []).map((t) => compileTransform(t, hooks.now));
  const explicitNumber = (rule.transform ?? []).some((t) =>
    ['number', 'integer', 'money', 'days-since', 'round', 'floor', 'ceil'].includes(t.name),
  );
  // A plain `Bedrooms: Beds` rule still yields a number: numeric fields get the number transform implied.
  if (NUMERIC_FIELDS.has(field) && !explicitNumber && !rule.map)
    transforms.push(compileTransform({ name: 'number' }, hooks.now));
  return transforms;
}

/** The value's final form for its field: a list of images, ExtensionColumn's entries as they are, a scalar or text. */
function shapeOf(field: ListingField): (v: unknown) => unknown {
  if (field === 'Images') return toList;
  if (field === 'ExtensionColumn') return (v) => v;
  return NUMERIC_FIELDS.has(field) ? toScalar : toText;
}

/** Every step of the pipeline, in order; the way any rule's value goes. */
function generalPath(field: ListingField, pipeline: Pipeline): FieldFn {
  // (locals, not the object's properties: the closure below is the hot path of a big feed)
  const { label, unit, source, list, transforms, skip, map, dflt, shape, set } = pipeline;
  const convert = converter(field, pipeline);
  return (record, out, result) => {
    let v = source ? source(record) : undefined;
    if (list && !isEmpty(v)) v = list(v);
    if (isEmpty(v)) {
      if (unit?.problem()) result.issues.push({ field, value: undefined, rule: unit.problem()! });
      else if (dflt !== undefined) set(out, dflt);
      return;
    }
    try {
      if (typeof v === 'string') v = v.trim();
      for (const t of transforms) {
        if (skip && skip.has(foldLookup(v))) break;
        v = t(v);
      }
      if (skip && skip.has(foldLookup(v))) {
        result.skip ??= `${label} is ${JSON.stringify(v)}: off the market`;
        return;
      }
      if (map) v = map(v);
      if (convert) v = convert(v, record, out, result);
      if (v !== undefined) set(out, shape(v));
    } catch (err) {
      if (!(err instanceof TransformFailure)) throw err;
      result.issues.push({ field, value: v, rule: err.message });
    }
  };
}

/** The rule's unit and period steps as one (undefined without either): undefined leaves the field out. */
function converter(
  field: ListingField,
  { unit, perMonth }: Pipeline,
):
  | ((v: unknown, record: Record<string, unknown>, out: Record<string, unknown>, result: Working) => unknown)
  | undefined {
  if (!unit && !perMonth) return undefined;
  return (v, record, out, result) => {
    const inUnit = unit ? unit.convert(v, out, field, result) : v;
    return perMonth ? perMonth(inUnit, record) : inUnit;
  };
}

/**
 * Most rules just copy a column: a text value with nothing to trim, or a plain decimal number.
 * Those take a short path (undefined for any other rule); everything else goes the general way.
 */
function plainPath(
  field: ListingField,
  rule: FieldRuleObject,
  pipeline: Pipeline,
  general: FieldFn,
): FieldFn | undefined {
  const { source, map, skip, unit, perMonth, list, set } = pipeline;
  const plain =
    source &&
    !rule.transform?.length &&
    !map &&
    !skip &&
    !unit &&
    !perMonth &&
    !list &&
    field !== 'Images' &&
    field !== 'ExtensionColumn';
  if (!plain) return undefined;
  if (NUMERIC_FIELDS.has(field)) {
    return (record, out, result) => {
      const v = source(record);
      if (typeof v === 'string' && PLAIN_NUMBER.test(v)) set(out, Number(v));
      else general(record, out, result);
    };
  }
  return (record, out, result) => {
    const v = source(record);
    if (isPlainText(v)) set(out, v);
    else general(record, out, result);
  };
}

/**
 * `out => out.Bedrooms = v` as code of its own: the store of every field's rule is then a site that
 * sees one name (a cached store), not one shared site that sees them all (see propertyReader).
 */
function propertyWriter(field: ListingField): (out: Record<string, unknown>, v: unknown) => void {
  return new Function('out', 'v', `out[${JSON.stringify(field)}] = v;`) as (
    out: Record<string, unknown>,
    v: unknown,
  ) => void;
}

/**
 * `when: { SaleType: for_rent }`: the field keeps its value (and its issues) only when the listing,
 * as mapped, meets the condition. Decided once every field is mapped.
 */
function onlyWhen(field: ListingField, when: NonNullable<FieldRuleObject['when']>, fn: FieldFn): FieldFn {
  const tests = Object.entries(when).map(([f, want]) => {
    const accepted = new Set((Array.isArray(want) ? want : [want]).map(foldLookup));
    return (out: Record<string, unknown>) => !isEmpty(out[f]) && accepted.has(foldLookup(out[f]));
  });
  return (record, out, result) => {
    const own: Working = { candidate: out, issues: [], after: result.after };
    fn(record, out, own);
    result.after.push(() => {
      if (tests.every((t) => t(out))) {
        result.issues.push(...own.issues);
        if (own.skip !== undefined) result.skip ??= own.skip;
      } else delete out[field];
    });
  };
}

interface CompiledUnit {
  /** the rule's source, noting which unit the value it returns is in */
  source: Getter;
  /** why a value was found but no unit for it (empty when fine) */
  problem(): string | undefined;
  convert(v: unknown, out: Record<string, unknown>, field: ListingField, result: Working): unknown;
}

/**
 * Units as data: `unit: { from: LotSizeUnits, to: AreaUnit }` reads the unit from the record
 * ("Square Feet", "SquareMeters", "Acres", ...) and converts to the unit the listing's AreaUnit
 * names; `from` keyed by source path gives each source of the rule its own unit.
 */
function compileUnit(rule: FieldRuleObject, spec: UnitRule): CompiledUnit {
  const froms = rule.from === undefined ? [] : Array.isArray(rule.from) ? rule.from : [rule.from];
  const unitReader = (ref: string): ((record: Record<string, unknown>) => AreaUnitName | string) => {
    if ((AREA_UNIT_NAMES as readonly string[]).includes(ref)) return () => ref as AreaUnitName;
    const get = compilePath(ref);
    return (record) => {
      const named = get(record);
      if (isEmpty(named)) return spec.default ?? `${ref} is empty: the unit is unknown`;
      const one = Array.isArray(named) ? named[0] : named;
      return (
        parseAreaUnit(one) ?? `${ref} ${JSON.stringify(one)} is not an area unit (Square Feet, Square Meters, Acres)`
      );
    };
  };
  const sources = froms.map((path) => {
    const ref = typeof spec.from === 'string' ? spec.from : spec.from[path];
    return {
      get: compilePath(path),
      unit: ref === undefined ? () => spec.default ?? `no unit given for ${path}` : unitReader(ref),
    };
  });
  let unit: AreaUnitName | undefined;
  let problem: string | undefined;
  const isUnit = (u: string): u is AreaUnitName => (AREA_UNIT_NAMES as readonly string[]).includes(u);
  return {
    source(record) {
      unit = undefined;
      problem = undefined;
      for (const s of sources) {
        const v = s.get(record);
        if (isEmpty(v)) continue;
        const u = s.unit(record);
        if (isUnit(u)) {
          unit = u;
          return v;
        }
        problem ??= u; // a value whose unit is unknown: try the next source before giving up
      }
      return undefined;
    },
    problem: () => problem,
    convert(v, out, field, result) {
      if (typeof v !== 'number') throw new TransformFailure('unit: not a number');
      const from = unit!;
      if (spec.to !== 'AreaUnit') return convertArea(v, from, spec.to);
      result.after.push(() => {
        const to = parseAreaUnit(out.AreaUnit);
        if (to && typeof out[field] === 'number') out[field] = convertArea(out[field] as number, from, to);
      });
      return v;
    },
  };
}

/** A payment brought to a month from the period the record names; undefined when it is not a monthly amount. */
type PerMonth = (v: unknown, record: Record<string, unknown>) => unknown;

/**
 * `per: { from: AssociationFeeFrequency }`: the amount is paid per the period that field names, and
 * the listing field (HOAMonth) is a month's. An empty period leaves the amount as it is; a one-time or
 * seasonal fee, or a period no one knows (told as an unmapped value), leaves the field out rather
 * than show a yearly fee as a monthly one.
 */
function compilePerMonth(field: ListingField, path: string, hooks: Hooks): PerMonth {
  const get = compilePath(path);
  const onUnmapped = hooks.onUnmapped && ((value: string) => hooks.onUnmapped!({ field, from: path, value }));
  return (v, record) => {
    if (typeof v !== 'number') throw new TransformFailure('per: not a number');
    const named = get(record);
    if (isEmpty(named)) return v;
    const period = Array.isArray(named) ? named[0] : named;
    const times = paymentsAMonth(period);
    if (times === undefined) onUnmapped?.(String(period));
    if (times == null) return undefined;
    return Math.round(v * times * 100) / 100;
  };
}

/** `list: { where, orderBy, pick }`: the elements of a list source kept, ordered and picked. */
function compileList(spec: ListRule): Transform {
  const conditions = spec.where === undefined ? [] : Array.isArray(spec.where) ? spec.where : [spec.where];
  const tests = conditions.map(compileCondition);
  const orderBy = spec.orderBy ? compilePath(spec.orderBy) : undefined;
  const pick = spec.pick ? compilePath(spec.pick) : undefined;
  return (v) => {
    let elements = (Array.isArray(v) ? v : [v]).filter(
      (e): e is Record<string, unknown> => e !== null && typeof e === 'object' && !Array.isArray(e),
    );
    if (tests.length) elements = elements.filter((e) => tests.some((t) => t(e)));
    if (orderBy) {
      const rank = (e: Record<string, unknown>) => {
        const n = Number(orderBy(e));
        return isEmpty(orderBy(e)) || Number.isNaN(n) ? Number.POSITIVE_INFINITY : n;
      };
      elements = elements
        .map((e, i) => ({ e, i, r: rank(e) }))
        .sort((a, b) => a.r - b.r || a.i - b.i)
        .map((x) => x.e);
    }
    if (!pick) return elements;
    return elements.flatMap((e) => {
      const x = pick(e);
      return isEmpty(x) ? [] : Array.isArray(x) ? x : [x];
    });
  };
}

function compileCondition(condition: ListCondition): (e: Record<string, unknown>) => boolean {
  const checks = Object.entries(condition).map(([path, accepted]) => {
    const get = compilePath(path);
    const matchers = (Array.isArray(accepted) ? accepted : [accepted]).map((a): ((v: unknown) => boolean) => {
      if (a === '') return isEmpty;
      if (a.endsWith('*')) {
        const prefix = foldLookup(a.slice(0, -1));
        return (v) => !isEmpty(v) && foldLookup(v).startsWith(prefix);
      }
      const want = foldLookup(a);
      return (v) => !isEmpty(v) && foldLookup(v) === want;
    });
    return (e: Record<string, unknown>) => {
      const v = get(e);
      return matchers.some((m) => m(v));
    };
  });
  return (e) => checks.every((c) => c(e));
}

const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

function compileValueMap(
  map: Record<string, string | number | boolean>,
  onUnmapped?: (value: string) => void,
): Transform {
  const exact = new Map(Object.entries(map));
  // display names and OData member names alike: "Active Under Contract" = "ActiveUnderContract"
  const folded = new Map(Object.entries(map).map(([k, v]) => [foldLookup(k), v]));
  // "*" maps every value not listed; without it such values pass through (and validation judges them)
  const other = map['*'];
  return (v) => {
    if (Array.isArray(v)) v = v[0];
    const s = String(v);
    const hit = exact.get(s) ?? folded.get(foldLookup(s));
    if (hit !== undefined) return hit;
    if (other !== undefined) return other;
    onUnmapped?.(s);
    return v;
  };
}

function toList(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => !isEmpty(x)).map((x) => String(x).trim());
  return String(v)
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
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
  presetExtension: Record<string, ExtensionSource> | undefined,
  restricted: ReadonlyMap<string, string>,
): ((record: Record<string, unknown>) => { Key: string; value: string }[]) | undefined {
  const pairs: [string, string][] = Array.isArray(config) ? config.map((p) => [p, p]) : Object.entries(config);
  // a preset's entry that reads a restricted field is left out (the feed's own are a config error: restricted-fields.ts)
  const allowed = Object.entries(presetExtension ?? {}).filter(([, source]) =>
    extensionPaths(source).every((p) => p.split('.').every((seg) => !restricted.has(seg.trim().toLowerCase()))),
  );
  const fromPreset = allowed.map(([Key, source]) => [Key, compileExtensionSource(source)] as const);
  if (!fromPreset.length && !pairs.length) return undefined;
  const getters = pairs.map(([key, path]) => [key, compilePath(path)] as const);
  return (record) => {
    const out: { Key: string; value: string }[] = [];
    for (const [Key, get] of fromPreset) {
      const value = get(record);
      if (value !== undefined) out.push({ Key, value });
    }
    for (const [Key, get] of getters) {
      const v = get(record);
      if (isEmpty(v)) continue;
      out.push({
        Key,
        value: Array.isArray(v)
          ? v.filter((x) => !isEmpty(x)).join(', ')
          : typeof v === 'object'
            ? JSON.stringify(v)
            : String(v).trim(),
      });
    }
    return out;
  };
}
