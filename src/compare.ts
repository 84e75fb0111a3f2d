// One order of strings for everything that must come out the same on every machine: by UTF-16 code
// unit, as `<` compares them (and Array.prototype.sort without a comparator), never by the locale
// (localeCompare), which varies with ICU data and settings.

/** `a` before `b` by UTF-16 code unit: -1, 0 or 1, for Array.prototype.sort. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
