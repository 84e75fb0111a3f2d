import { z } from 'zod';
import type { ListingField } from '../../listing/schema.js';
import { FieldRuleObject } from '../config-schema.js';

export interface Preset {
  fields: Partial<Record<ListingField, FieldRuleObject>>;
  defaults: Partial<Record<ListingField, unknown>>;
  /** ExtensionColumn Key → source path */
  extension?: Record<string, string>;
  /** fields derived from the clock (DaysOnMarket): ignored for change detection unless a feed sets `ignore` */
  ignore: ListingField[];
}

/** Presets are written like config and parsed by the same schema, so they cannot drift from it. */
export function definePreset(p: {
  fields: Partial<Record<ListingField, string | z.input<typeof FieldRuleObject>>>;
  defaults?: Partial<Record<ListingField, unknown>>;
  extension?: Record<string, string>;
  ignore?: ListingField[];
}): Preset {
  const fields: Preset['fields'] = {};
  for (const [field, rule] of Object.entries(p.fields) as [ListingField, string | z.input<typeof FieldRuleObject>][]) {
    fields[field] = FieldRuleObject.parse(typeof rule === 'string' ? { from: rule } : rule);
  }
  return { fields, defaults: p.defaults ?? {}, extension: p.extension, ignore: p.ignore ?? [] };
}
