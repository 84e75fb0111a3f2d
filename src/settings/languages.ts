// The language names AIResponseLanguage accepts: English names of the ISO 639 languages, as
// Intl.DisplayNames gives them, so the list follows Node's ICU data instead of a hand-kept table.
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

let names: Map<string, string> | undefined;

/** Lower-cased name → the name as written by ICU ("english" → "English"). Built once, on first use. */
export function languageNames(): ReadonlyMap<string, string> {
  if (names) return names;
  const display = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
  names = new Map();
  for (const code of isoCodes()) {
    const name = display.of(code);
    // With fallback 'none' an unknown code gives undefined; a name equal to its code is no name.
    if (name && name.toLowerCase() !== code) names.set(name.toLowerCase(), name);
  }
  return names;
}

/** The canonical spelling of a language name, or undefined when `value` is not one. */
export function canonicalLanguageName(value: string): string | undefined {
  return languageNames().get(value.trim().toLowerCase());
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

function* isoCodes(): Generator<string> {
  for (const a of LETTERS) {
    for (const b of LETTERS) {
      yield a + b;
      for (const c of LETTERS) yield a + b + c;
    }
  }
}
