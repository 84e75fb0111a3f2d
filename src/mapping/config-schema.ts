// The `mapping` of a feed in config: a preset, then per-field rules, defaults for whole fields, and
// source fields copied into ExtensionColumn. Checked at config load, so an unknown preset, transform
// or listing field is reported with its path in the file (feeds[0].mapping.fields.Bedroms).
import { z } from 'zod';
import { nearest } from '../format/nearest.js';
import { LISTING_FIELDS, type ListingField } from '../listing/schema.js';
import { foldLookup } from './lookup.js';

const PRESET_NAMES = ['reso', 'zillow', 'listhub', 'mits', 'hotpads'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

const TRANSFORM_NAMES = [
  'trim',
  'number',
  'integer',
  'money',
  'boolean',
  'split',
  'lowercase',
  'uppercase',
  'days-since',
  'words',
  'round',
  'floor',
  'ceil',
] as const;
export type TransformName = (typeof TRANSFORM_NAMES)[number];

const TransformNameSchema = z.enum(TRANSFORM_NAMES, {
  error: (iss) => `unknown transform ${JSON.stringify(iss.input)}; known: ${TRANSFORM_NAMES.join(', ')}`,
});

/** A transform by name, or with its argument: `{ name: money, locale: de-DE }`, `{ name: split, separator: "|" }`. */
export const TransformSpec = z.preprocess(
  (v) => (typeof v === 'string' ? { name: v } : v),
  z.strictObject({
    name: TransformNameSchema,
    locale: z
      .string()
      .optional()
      .describe('money/number: number format of the source, e.g. de-DE for "1.250.000,00 €"'),
    separator: z.string().min(1).optional().describe('split: separator of the list (default ",")'),
  }),
);
export type TransformSpec = z.infer<typeof TransformSpec>;

export const AREA_UNIT_NAMES = ['sqft', 'sqm', 'acres'] as const;
export type AreaUnitName = (typeof AREA_UNIT_NAMES)[number];

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const fieldValue = z.union([scalar, z.array(z.string())]);

/** A unit name (sqft, sqm, acres), or the source path of a field that names the unit ("LotSizeUnits"). */
const unitSource = z.string().min(1);

export const UnitRule = z.strictObject({
  from: z
    .union([unitSource, z.record(z.string().min(1), unitSource)])
    .describe(
      'unit of the source value: sqft | sqm | acres, a source path naming it (LotSizeUnits), or source path → either, for a rule with several `from`s',
    ),
  to: z
    .union([z.enum(AREA_UNIT_NAMES), z.literal('AreaUnit')])
    .describe("sqft | sqm | acres, or AreaUnit: the unit the listing's own AreaUnit names"),
  default: z.enum(AREA_UNIT_NAMES).optional().describe('unit when the field naming it is empty'),
});
export type UnitRule = z.infer<typeof UnitRule>;

/** Element filter of `list.where`: element path → accepted values ("" for empty, "image/*" for a prefix). */
const ListCondition = z.record(z.string().min(1), z.union([z.string(), z.array(z.string()).min(1)]));
export type ListCondition = z.infer<typeof ListCondition>;

export const ListRule = z.strictObject({
  where: z
    .union([ListCondition, z.array(ListCondition).min(1)])
    .optional()
    .describe(
      'keep the elements matching this condition (or any of a list); values match case-, space- and underscore-insensitively',
    ),
  orderBy: z
    .string()
    .min(1)
    .optional()
    .describe('element path to order by (numbers ascending; elements without it last)'),
  pick: z.string().min(1).optional().describe('element path to take from each kept element'),
});
export type ListRule = z.infer<typeof ListRule>;

export const FieldRuleObject = z
  .strictObject({
    from: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .describe('dotted source path (Location.StreetAddress), or a list: the first non-empty wins'),
    template: z
      .string()
      .min(1)
      .optional()
      .describe('text with {Path} placeholders, e.g. https://broker.test/l/{ListingId}'),
    list: ListRule.optional().describe('the source is a list of objects (RESO Media): filter, order, pick'),
    transform: z
      .preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(TransformSpec))
      .optional()
      .describe('a transform or a list, applied in order'),
    map: z
      .record(z.string(), scalar)
      .optional()
      .describe(
        'source value → listing value, matched case-, space- and underscore-insensitively; "*" for any other value (else it passes through)',
      ),
    skip: z
      .array(z.string())
      .optional()
      .describe('source values that leave the record out of the feed (skipped), matched like map'),
    unit: UnitRule.optional(),
    per: z
      .strictObject({
        from: z.string().min(1).describe('source path naming how often the amount is paid (AssociationFeeFrequency)'),
      })
      .optional()
      .describe(
        'the amount is per the period a field names (Annually, Quarterly, Monthly, Weekly, ...): brought to a month; empty: as it is; One Time, Seasonal: left out',
      ),
    when: listingFieldKeys(z.union([scalar, z.array(scalar).min(1)]))
      .optional()
      .describe(
        'keep the value only when these listing fields (as mapped) have one of these values, e.g. { SaleType: for_rent }',
      ),
    default: fieldValue.optional().describe('value when the source has none'),
    onInvalid: z
      .enum(['reject', 'default'])
      .optional()
      .describe(
        "reject (the default): a value that breaks the rules rejects the record; default: the rule's next source with a usable value, else the rule's default (or the feed's defaults) replaces it, counted in the report",
      ),
  })
  .superRefine((rule, ctx) => {
    if (!rule.map) return;
    const seen = new Map<string, [string, unknown]>();
    for (const [k, v] of Object.entries(rule.map)) {
      const folded = foldLookup(k);
      const prior = seen.get(folded);
      if (prior && prior[1] !== v) {
        ctx.addIssue({
          code: 'custom',
          path: ['map', k],
          message: `${JSON.stringify(k)} and ${JSON.stringify(prior[0])} are the same value to a map (case, spaces and underscores are ignored) but map to ${JSON.stringify(v)} and ${JSON.stringify(prior[1])}`,
        });
      }
      seen.set(folded, [k, v]);
    }
  });
export type FieldRuleObject = z.infer<typeof FieldRuleObject>;

/** `"SourcePath"` is short for `{ from: SourcePath }`; `null` removes a preset's rule. */
const FieldRule = z.preprocess((v) => (typeof v === 'string' ? { from: v } : v), FieldRuleObject.nullable());
export type FieldRule = z.infer<typeof FieldRule>;

/** Listing fields a mapping may fill: every field of the spec but SerialNumber (the feed's chatbot). */
const MAPPABLE_FIELDS = LISTING_FIELDS.filter((f) => f !== 'SerialNumber');

/** A record keyed by listing fields; an unknown key is an issue at its own path (fields.Bedroms). */
function listingFieldKeys<T extends z.ZodType>(value: T) {
  const key = z.custom<ListingField>((k) => typeof k === 'string' && (MAPPABLE_FIELDS as string[]).includes(k), {
    error: (iss) =>
      iss.input === 'SerialNumber'
        ? "SerialNumber is the feed's chatbot; it cannot be mapped"
        : `not a listing field${suggest(String(iss.input))}; fields are ${MAPPABLE_FIELDS.join(', ')}`,
  });
  return z.partialRecord(key, value, {
    // zod reports a bad key as "Invalid key in record"; hand on the reason the key check gave
    error: (iss) => (iss.code === 'invalid_key' ? iss.issues?.[0]?.message : undefined),
  });
}

function suggest(key: string): string {
  const near = nearest(key, MAPPABLE_FIELDS, 2);
  return near ? ` (did you mean ${near}?)` : '';
}

export const MappingConfig = z
  .strictObject({
    preset: z
      .enum(PRESET_NAMES, {
        error: (iss) => `unknown preset ${JSON.stringify(iss.input)}; known: ${PRESET_NAMES.join(', ')}`,
      })
      .optional()
      .describe('field rules for a known feed format; `fields` override them one by one'),
    fields: listingFieldKeys(FieldRule).default({}).describe('listing field → rule'),
    defaults: listingFieldKeys(fieldValue)
      .default({})
      .describe('listing field → value used when the rule yields nothing'),
    extension: z
      .union([z.array(z.string().min(1)), z.record(z.string(), z.string().min(1))])
      .default([])
      .describe('source paths copied into ExtensionColumn as {Key, value}: a list (Key = path) or Key → path'),
  })
  .superRefine((m, ctx) => {
    for (const [field, rule] of Object.entries(m.fields) as [string, FieldRuleObject | null][]) {
      if (
        rule?.onInvalid !== 'default' ||
        rule.default !== undefined ||
        (m.defaults as Record<string, unknown>)[field] !== undefined
      )
        continue;
      ctx.addIssue({
        code: 'custom',
        path: ['fields', field, 'onInvalid'],
        message: `onInvalid: default needs a value to put in: set fields.${field}.default or defaults.${field}`,
      });
    }
  });
export type MappingConfig = z.infer<typeof MappingConfig>;
