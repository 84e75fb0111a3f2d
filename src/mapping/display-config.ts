// A feed's `display` in config: what the MLS allows the chatbot to show (docs/display-rules.md).
// `purpose` says which rules apply: `idx` (a public display under the MLS's IDX rules, the default
// for RESO sources), `vow` (a registered consumer's display) or `internal` (a brokerage's own tool,
// the default for CSV and XML exports: no rule). Each purpose has its own defaults, resolved here
// once, at config load, so the rest of the code reads one resolved `DisplayRules`.
import { z } from 'zod';
import { LIMITS } from '../listing/schema.js';

export const PURPOSES = ['idx', 'vow', 'internal'] as const;
export type Purpose = (typeof PURPOSES)[number];

/**
 * The rules that hide a listing. The four flags are RESO Data Dictionary fields (MlgCanView is MLS
 * Grid's); StandardStatus and sold-window read StandardStatus and CloseDate.
 */
export const HIDE_RULES = [
  'MlgCanView',
  'InternetEntireListingDisplayYN',
  'IDXParticipationYN',
  'StandardStatus',
  'sold-window',
] as const;
export type HideRule = (typeof HIDE_RULES)[number];

/** Source fields a rule reads, which `flags` may name under an MLS's local name (`IDXParticipationYN: ACT_IDXOptInYN`). */
export const RULE_FIELDS = [
  'MlgCanView',
  'InternetEntireListingDisplayYN',
  'InternetAddressDisplayYN',
  'IDXParticipationYN',
  'StandardStatus',
  'CloseDate',
] as const;
export type RuleField = (typeof RULE_FIELDS)[number];

/** StandardStatus values shown by default (matched case-, space- and underscore-insensitively, so `ActiveUnderContract` too). */
export const DEFAULT_STATUSES: Readonly<Record<Purpose, readonly string[]>> = {
  idx: ['Active', 'Active Under Contract', 'Pending', 'Closed'],
  vow: ['Active', 'Active Under Contract', 'Pending', 'Closed'],
  internal: [],
};

/** Days a Closed listing stays shown after its CloseDate, by default: never on idx; three years on vow. */
export const DEFAULT_SOLD_DAYS: Readonly<Record<Purpose, number>> = { idx: 0, vow: 1095, internal: 0 };

/** The listing firm, "in a reasonably prominent location" (CVRMLS IDX rules 11.3.3; docs/display-rules.md). */
export const DEFAULT_ATTRIBUTION = 'Listing courtesy of {ListOfficeName}';

/** ExtensionColumn Keys the rendered texts go under. */
export const ATTRIBUTION_KEY = 'Attribution';
export const DISCLAIMER_KEY = 'Disclaimer';

const fieldName = z.string().min(1).max(200);

export const DisplayConfig = z.strictObject({
  purpose: z
    .enum(PURPOSES, {
      error: (iss) =>
        `unknown purpose ${JSON.stringify(iss.input)}; known: ${PURPOSES.join(', ')} (idx: a public display; vow: registered consumers; internal: no display rule)`,
    })
    .optional()
    .describe('idx (default for RESO sources), vow or internal (default for CSV and XML: no display rule)'),
  soldDays: z
    .number()
    .int()
    .min(0)
    .max(36_500)
    .optional()
    .describe(
      'a Closed listing is shown as Sold until this many days after its CloseDate, then removed (default: idx 0, never; vow 1095)',
    ),
  statuses: z
    .array(z.string().min(1).max(100))
    .min(1)
    .max(50)
    .optional()
    .describe('StandardStatus values shown (default per purpose, docs/display-rules.md)'),
  attribution: z
    .string()
    .min(1)
    .max(LIMITS.shortText)
    .optional()
    .describe(
      'text with {Field} placeholders from the source record, rendered into ExtensionColumn (Key Attribution); idx and vow default: "Listing courtesy of {ListOfficeName}"',
    ),
  disclaimer: z
    .string()
    .min(1)
    .max(LIMITS.longText)
    .optional()
    .describe("text put in every listing's ExtensionColumn (Key Disclaimer)"),
  withhold: z
    .array(fieldName)
    .max(1000)
    .default([])
    .describe('source fields never sent, added to the built-in restricted list'),
  flags: z
    .partialRecord(
      z.enum(RULE_FIELDS, {
        error: (iss) =>
          `flags names a rule's field; known: ${RULE_FIELDS.join(', ')} (got ${JSON.stringify(iss.input)})`,
      }),
      fieldName,
    )
    .default({})
    .describe("a rule's field → the source field an MLS carries it under (e.g. IDXParticipationYN: ACT_IDXOptInYN)"),
});
export type DisplayConfig = z.infer<typeof DisplayConfig>;

/** A feed's display rules with every default filled in (resolveDisplay). */
export interface DisplayRules {
  purpose: Purpose;
  soldDays: number;
  statuses: readonly string[];
  attribution?: string;
  disclaimer?: string;
  withhold: readonly string[];
  /** the source field each rule reads (its own name unless `flags` says otherwise) */
  fields: Readonly<Record<RuleField, string>>;
}

/** The purpose a feed without `display.purpose` has: idx for an MLS's RESO Web API, internal for a file export. */
export function defaultPurpose(sourceKind: unknown): Purpose {
  return sourceKind === 'reso' ? 'idx' : 'internal';
}

/** `display` as given (or absent) → the rules with the purpose's defaults. */
export function resolveDisplay(given: Partial<DisplayConfig> | undefined, sourceKind: unknown): DisplayRules {
  const purpose = given?.purpose ?? defaultPurpose(sourceKind);
  const fields = Object.fromEntries(RULE_FIELDS.map((f) => [f, given?.flags?.[f] ?? f])) as Record<RuleField, string>;
  const attribution = given?.attribution ?? (purpose === 'internal' ? undefined : DEFAULT_ATTRIBUTION);
  return {
    purpose,
    soldDays: given?.soldDays ?? DEFAULT_SOLD_DAYS[purpose],
    statuses: given?.statuses ?? DEFAULT_STATUSES[purpose],
    ...(attribution !== undefined && { attribution }),
    ...(given?.disclaimer !== undefined && { disclaimer: given.disclaimer }),
    withhold: given?.withhold ?? [],
    fields,
  };
}

/** The `{Field}` placeholders of a template, in order. */
export function templateFields(template: string): string[] {
  return [...template.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!.trim());
}
