// The language names AIResponseLanguage accepts: English names of the ISO 639 languages, as
// Intl.DisplayNames gives them, so the list follows Node's ICU data instead of a hand-kept table.
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

// Two tables, each built once on first use: the two-letter codes (the common languages, ~5 ms)
// and the three-letter ones (~200 ms), asked only when a name is not among the first.
const tables: Partial<Record<2 | 3, Map<string, string>>> = {};

/** Lower-cased name → the name as written by ICU ("english" → "English"), for codes of `length` letters. */
export function languageNames(length: 2 | 3): ReadonlyMap<string, string> {
  const cached = tables[length];
  if (cached) return cached;
  const display = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
  const names = new Map<string, string>();
  for (const code of isoCodes(length)) {
    const name = display.of(code);
    // With fallback 'none' an unknown code gives undefined; a name equal to its code is no name.
    if (name && name.toLowerCase() !== code) names.set(name.toLowerCase(), name);
  }
  return (tables[length] = names);
}

/** The canonical spelling of a language name, or undefined when `value` is not one. */
export function canonicalLanguageName(value: string): string | undefined {
  const key = value.trim().toLowerCase();
  return languageNames(2).get(key) ?? languageNames(3).get(key);
}

/** The name of the language a code such as "en" or "spa" stands for, to suggest it. */
export function languageNameOfCode(value: string): string | undefined {
  if (!/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/.test(value)) return undefined;
  try {
    return new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' }).of(value.replace(/_/g, '-'));
  } catch {
    return undefined; // not a well-formed BCP 47 tag: no suggestion to make
  }
}

function* isoCodes(length: 2 | 3): Generator<string> {
  for (const a of LETTERS) {
    for (const b of LETTERS) {
      if (length === 2) yield a + b;
      else for (const c of LETTERS) yield a + b + c;
    }
  }
}
