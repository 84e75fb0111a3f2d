// The `mapping` of a feed in config: a preset, then per-field rules, defaults for whole fields, and
// source fields copied into ExtensionColumn. Checked at config load, so an unknown preset, transform
// or listing field is reported with its path in the file (feeds[0].mapping.fields.Bedroms).
import { z } from 'zod';
import { nearest } from '../format/nearest.js';
import { LISTING_FIELDS, type ListingField } from '../listing/schema.js';

export const PRESET_NAMES = ['reso', 'zillow', 'listhub'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export const TRANSFORM_NAMES = [
  'trim',
  'number',
  'integer',
  'money',
  'boolean',
  'split',
  'lowercase',
  'uppercase',
  'days-since',
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
    locale: z.string().optional().describe('money/number: number format of the source, e.g. de-DE for "1.250.000,00 €"'),
    separator: z.string().min(1).optional().describe('split: separator of the list (default ",")'),
  }),
);
export type TransformSpec = z.infer<typeof TransformSpec>;

export const AREA_UNIT_NAMES = ['sqft', 'sqm', 'acres'] as const;
export type AreaUnitName = (typeof AREA_UNIT_NAMES)[number];

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const fieldValue = z.union([scalar, z.array(z.string())]);

export const FieldRuleObject = z.strictObject({
  from: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
    .optional()
    .describe('dotted source path (Location.StreetAddress), or a list: the first non-empty wins'),
  template: z.string().min(1).optional().describe('text with {Path} placeholders, e.g. https://broker.test/l/{ListingId}'),
  transform: z
    .preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(TransformSpec))
    .optional()
    .describe('a transform or a list, applied in order'),
  map: z.record(z.string(), scalar).optional().describe('source value → listing value; "*" for any other value (else it passes through)'),
  skip: z.array(z.string()).optional().describe('source values that leave the record out of the feed (skipped)'),
  unit: z.strictObject({ from: z.enum(AREA_UNIT_NAMES), to: z.enum(AREA_UNIT_NAMES) }).optional(),
  default: fieldValue.optional().describe('value when the source has none'),
});
export type FieldRuleObject = z.infer<typeof FieldRuleObject>;

/** `"SourcePath"` is short for `{ from: SourcePath }`; `null` removes a preset's rule. */
export const FieldRule = z.preprocess((v) => (typeof v === 'string' ? { from: v } : v), FieldRuleObject.nullable());
export type FieldRule = z.infer<typeof FieldRule>;

/** Listing fields a mapping may fill: every field of the spec but SerialNumber (the feed's chatbot). */
export const MAPPABLE_FIELDS = LISTING_FIELDS.filter((f) => f !== 'SerialNumber');

/** A record keyed by listing fields; an unknown key is an issue at its own path (fields.Bedroms). */
function listingFieldKeys<T extends z.ZodType>(value: T) {
  const key = z.string().superRefine((k, ctx) => {
    if ((MAPPABLE_FIELDS as string[]).includes(k)) return;
    ctx.addIssue({
      code: 'custom',
      message:
        k === 'SerialNumber'
          ? "SerialNumber is the feed's chatbot; it cannot be mapped"
          : `not a listing field${suggest(k)}; fields are ${MAPPABLE_FIELDS.join(', ')}`,
    });
  });
  return z.record(key, value, {
    // zod reports a bad key as "Invalid key in record"; hand on the reason the key check gave
    error: (iss) => (iss.code === 'invalid_key' ? iss.issues?.[0]?.message : undefined),
  }) as unknown as z.ZodType<Partial<Record<ListingField, z.output<T>>>, Record<string, z.input<T>>>;
}

function suggest(key: string): string {
  const near = nearest(key, MAPPABLE_FIELDS, 2);
  return near ? ` (did you mean ${near}?)` : '';
}

export const MappingConfig = z.strictObject({
  preset: z
    .enum(PRESET_NAMES, { error: (iss) => `unknown preset ${JSON.stringify(iss.input)}; known: ${PRESET_NAMES.join(', ')}` })
    .optional()
    .describe('field rules for a known feed format; `fields` override them one by one'),
  fields: listingFieldKeys(FieldRule).default({}).describe('listing field → rule'),
  defaults: listingFieldKeys(fieldValue).default({}).describe('listing field → value used when the rule yields nothing'),
  extension: z
    .union([z.array(z.string().min(1)), z.record(z.string(), z.string().min(1))])
    .default([])
    .describe('source paths copied into ExtensionColumn as {Key, value}: a list (Key = path) or Key → path'),
});
export type MappingConfig = z.infer<typeof MappingConfig>;
