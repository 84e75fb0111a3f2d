import { z } from 'zod';
import type { ListingField } from '../../listing/schema.js';
import { FieldRuleObject } from '../config-schema.js';
import type { ExtensionSource } from '../extension-source.js';

export interface Preset {
  fields: Partial<Record<ListingField, FieldRuleObject>>;
  defaults: Partial<Record<ListingField, unknown>>;
  /** ExtensionColumn Key → where its value comes from (extension-source.ts); an entry that reads a field the feed's display rules restrict is left out */
  extension?: Record<string, ExtensionSource>;
  /** the record's path of its OpenHouse records (reso: expanded, or joined by the reader from the OpenHouse resource), read when the feed has them (open-houses.ts) */
  openHouses?: string;
  /** fields derived from the clock (DaysOnMarket): ignored for change detection unless a feed sets `ignore` */
  ignore: ListingField[];
}

/** A preset as written, like config: definePreset parses it. */
export interface PresetSpec {
  fields: Partial<Record<ListingField, string | z.input<typeof FieldRuleObject>>>;
  defaults?: Partial<Record<ListingField, unknown>>;
  extension?: Record<string, ExtensionSource>;
  openHouses?: string;
  ignore?: ListingField[];
}

/** Presets are written like config and parsed by the same schema, so they cannot drift from it. */
export function definePreset(p: PresetSpec): Preset {
  const fields: Preset['fields'] = {};
  for (const [field, rule] of Object.entries(p.fields) as [ListingField, string | z.input<typeof FieldRuleObject>][]) {
    // (once a process: without zod's JIT, as the config's parse, src/config/load.ts)
    fields[field] = FieldRuleObject.parse(typeof rule === 'string' ? { from: rule } : rule, { jitless: true });
  }
  return {
    fields,
    defaults: p.defaults ?? {},
    extension: p.extension,
    openHouses: p.openHouses,
    ignore: p.ignore ?? [],
  };
}
