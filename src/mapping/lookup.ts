// Lookup values as RESO servers spell them: Data Dictionary display names ("Active Under Contract",
// "Square Feet") or OData enum member names ("ActiveUnderContract", "SquareFeet"), in any case.
// One folding rule makes both spellings the same key, for value maps, skip lists and list filters.

/** The loose form of a lookup value: lower case, without spaces, underscores or hyphens. */
export function foldLookup(value: unknown): string {
  return String(value)
    .toLowerCase()
    .replace(/[\s_-]+/g, '');
}

/** An OData enum member name in its display form: SingleFamilyResidence → Single Family Residence. */
export function displayWords(value: string): string {
  return value
    .replace(/_+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/\s+/g, ' ')
    .trim();
}

export type AreaUnitName = 'sqft' | 'sqm' | 'acres';

const AREA_UNIT_SPELLINGS: Record<string, AreaUnitName> = {
  sqft: 'sqft',
  squarefeet: 'sqft',
  squarefoot: 'sqft',
  sf: 'sqft',
  ft2: 'sqft',
  sqm: 'sqm',
  squaremeters: 'sqm',
  squaremeter: 'sqm',
  squaremetres: 'sqm',
  squaremetre: 'sqm',
  m2: 'sqm',
  acres: 'acres',
  acre: 'acres',
  ac: 'acres',
};

/** "Square Feet", "SquareFeet", "sqft", "Acres", "Square Meters" … as a unit; undefined when unknown. */
export function parseAreaUnit(value: unknown): AreaUnitName | undefined {
  return AREA_UNIT_SPELLINGS[foldLookup(value)];
}

/**
 * Payments a month of each RESO AssociationFeeFrequency (Data Dictionary lookup; display names and
 * enum members alike, folded): Bi-Monthly is every other month, Semi-Monthly twice a month. One Time
 * and Seasonal are no monthly amount: null.
 */
const PERIODS_A_MONTH: Record<string, number | null> = {
  daily: 365 / 12,
  weekly: 52 / 12,
  semimonthly: 2,
  monthly: 1,
  bimonthly: 1 / 2,
  quarterly: 1 / 3,
  semiannually: 1 / 6,
  annually: 1 / 12,
  yearly: 1 / 12,
  onetime: null,
  seasonal: null,
};

/** How many times a month a payment `value` (a frequency) falls; null: not a recurring one; undefined: unknown. */
export function paymentsAMonth(value: unknown): number | null | undefined {
  return PERIODS_A_MONTH[foldLookup(value)];
}
