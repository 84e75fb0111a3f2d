// Feed items → mapped items: each record through the compiled mapping, then the spec's create schema.
// Pure: no I/O, nothing remembered between records.
import type { FeedItem } from '../feeds/types.js';
import { ownString } from '../feeds/own-string.js';
import { validateListing } from '../listing/validate.js';
import { compileMapping, type CompiledMapping } from './compile.js';
import type { MappingConfig } from './config-schema.js';
import type { ListingField } from '../listing/schema.js';
import type { ValidationIssue } from '../errors.js';
import type { MapContext, MappedItem, ShownBy } from './types.js';
import { isKeyed } from './item-key.js';
import { ADDRESS_FIELDS, readFlag, type DisplayVerdict } from './display-rules.js';

export type { MappedItem, MapContext } from './types.js';

export function mapFeed(
  items: AsyncIterable<FeedItem>,
  mapping: MappingConfig | CompiledMapping,
  ctx: MapContext,
): AsyncIterable<MappedItem> {
  const compiled =
    'map' in mapping && typeof mapping.map === 'function'
      ? (mapping as CompiledMapping)
      : compileMapping(mapping as MappingConfig);
  // a plain iterator rather than an async generator: one promise per item, not several (hot path)
  return {
    [Symbol.asyncIterator](): AsyncIterator<MappedItem> {
      const source = items[Symbol.asyncIterator]();
      return {
        async next(): Promise<IteratorResult<MappedItem>> {
          const r = await source.next();
          return r.done ? { done: true, value: undefined } : { done: false, value: mapItem(r.value, compiled, ctx) };
        },
        async return(): Promise<IteratorResult<MappedItem>> {
          await source.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

export function mapItem(item: FeedItem, compiled: CompiledMapping, ctx: MapContext): MappedItem {
  const { position } = item;
  if (item.kind !== 'record') return notARecord(item, compiled, ctx);
  const verdict = compiled.display?.(item.data);
  if (verdict?.kind === 'hidden' || verdict?.kind === 'held') return notShown(item, verdict, compiled, ctx);
  const mapped = compiled.map(item.data, ctx.serialNumber);
  let { candidate } = mapped;
  const key = keyOf(candidate, ctx.keyBy);
  if (mapped.skip !== undefined) return withKey({ kind: 'skipped', position, reason: mapped.skip }, key);
  if (verdict) candidate = shownAs(candidate, verdict);
  const { v, issues, replaced } = validated(candidate, mapped.issues, compiled, item.data);
  if (v.ok && issues.length === 0) {
    const k = keyOf(v.listing, ctx.keyBy);
    const shown = verdict && shownBy(verdict);
    return {
      kind: 'listing',
      position,
      key: k!,
      listing: v.listing,
      ...(replaced?.length && { replaced }),
      ...(shown && { shown }),
    };
  }
  // a field whose transform failed is also missing from the candidate: keep the transform's reason only
  const failed = new Set(issues.map((i) => i.field));
  const all = [...issues, ...(v.ok ? [] : v.issues.filter((i) => !failed.has(i.field)))];
  return withKey({ kind: 'rejected', position, issues: all }, key);
}

/** A read error or a removal: no listing to map, its key read from the data it has. */
function notARecord(
  item: Exclude<FeedItem, { kind: 'record' }>,
  compiled: CompiledMapping,
  ctx: MapContext,
): MappedItem {
  const { position } = item;
  if (item.kind === 'error') {
    const error: MappedItem = {
      kind: 'error',
      position,
      error: item.error,
      ...(item.standalone && { standalone: true }),
    };
    return item.data === undefined ? error : withKey(error, dataKey(item, item.data, compiled, ctx));
  }
  // (a removal the source resolved from its own state carries its key: reso-key-map.ts, item-key.ts)
  const key = dataKey(item, item.data, compiled, ctx);
  // MLS Grid's MlgCanView false: under display rules, a removal by that rule; a record the source
  // no longer returns (an EntityEvent's key, reso-events.ts) stays the source's word, 'removed'
  if (compiled.purpose !== 'internal' && readFlag(item.data.MlgCanView) === false)
    return withKey({ kind: 'skipped', position, reason: 'MlgCanView is false', rule: 'MlgCanView' }, key);
  return withKey({ kind: 'removed', position }, key);
}

/** A record the display rules hide (skipped by that rule) or hold back (rejected, naming the field at fault). */
function notShown(
  item: Extract<FeedItem, { kind: 'record' }>,
  verdict: Extract<DisplayVerdict, { kind: 'hidden' | 'held' }>,
  compiled: CompiledMapping,
  ctx: MapContext,
): MappedItem {
  const { position } = item;
  const key = dataKey(item, item.data, compiled, ctx);
  if (verdict.kind === 'hidden')
    return withKey({ kind: 'skipped', position, reason: verdict.reason, rule: verdict.rule }, key);
  return withKey(
    {
      kind: 'rejected',
      position,
      issues: [{ field: verdict.field, value: verdict.value, rule: verdict.reason }],
      held: true,
    },
    key,
  );
}

/**
 * The candidate validated; with `onInvalid: default`, each such field that breaks a rule takes the
 * rule's next source that holds a usable value, else its default (counted in `replaced`).
 */
function validated(
  candidate: Record<string, unknown>,
  mappedIssues: ValidationIssue[],
  compiled: CompiledMapping,
  record: Record<string, unknown>,
): { v: ReturnType<typeof validateListing>; issues: ValidationIssue[]; replaced?: ListingField[] } {
  let issues = mappedIssues;
  let v = validateListing(candidate);
  if ((v.ok && issues.length === 0) || !compiled.replacements.size) return { v, issues };
  const bad = new Set([...issues.map((i) => i.field), ...(v.ok ? [] : v.issues.map((i) => i.field))]);
  const invalid = [...compiled.replacements.keys()].filter((f) => bad.has(f));
  if (!invalid.length) return { v, issues };
  const fixed = { ...candidate };
  const replaced: ListingField[] = [];
  for (const f of invalid) {
    const usable = usableSource(compiled, f, record, fixed);
    if (usable.found) fixed[f] = usable.value;
    else {
      fixed[f] = compiled.replacements.get(f);
      replaced.push(f);
    }
  }
  issues = issues.filter((i) => !invalid.includes(i.field as ListingField));
  v = validateListing(fixed);
  return { v, issues, replaced };
}

/** A listing as the display rules let it be shown: its address withheld, the attribution and disclaimer in ExtensionColumn. */
function shownAs(
  candidate: Record<string, unknown>,
  verdict: Extract<DisplayVerdict, { kind: 'shown' }>,
): Record<string, unknown> {
  if (verdict.addressWithheld) for (const f of ADDRESS_FIELDS) delete candidate[f];
  if (verdict.extension.length)
    candidate.ExtensionColumn = [...((candidate.ExtensionColumn as unknown[] | undefined) ?? []), ...verdict.extension];
  return candidate;
}

function shownBy(verdict: DisplayVerdict): ShownBy | undefined {
  if (verdict.kind !== 'shown' || (!verdict.addressWithheld && verdict.until === undefined)) return undefined;
  return {
    ...(verdict.addressWithheld && { addressWithheld: true }),
    ...(verdict.until !== undefined && { until: verdict.until }),
  };
}

/** The first value of the field's sources, one by one, with which the listing breaks no rule of that field. */
function usableSource(
  compiled: CompiledMapping,
  field: ListingField,
  record: Record<string, unknown>,
  candidate: Record<string, unknown>,
): { found: boolean; value?: unknown } {
  for (const value of compiled.sourceValues(field, record, candidate)) {
    if (value === undefined) continue;
    const v = validateListing({ ...candidate, [field]: value });
    if (v.ok || !v.issues.some((i) => i.field === field)) return { found: true, value };
  }
  return { found: false };
}

/** The key the mapping reads from the item's data: the one the item carries when the sync keyed it (item-key.ts). */
function dataKey(
  item: FeedItem,
  data: Record<string, unknown>,
  compiled: CompiledMapping,
  ctx: MapContext,
): string | undefined {
  return isKeyed(item) ? item.key : compiled.keyOf(data, ctx.keyBy);
}

function keyOf(listing: Record<string, unknown>, keyBy: MapContext['keyBy']): string | undefined {
  const v = keyBy === 'URL' ? listing.Url : listing.MLSNumber;
  return typeof v === 'string' && v.trim() !== '' ? ownString(v.trim()) : undefined;
}

function withKey<T extends MappedItem>(item: T, key: string | undefined): T {
  return key === undefined ? item : { ...item, key };
}
