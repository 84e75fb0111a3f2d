// The language names AIResponseLanguage accepts: English names of the ISO 639 languages, as
// Intl.DisplayNames gives them, so the list follows Node's ICU data instead of a hand-kept table.
// ICU has no list of the languages it names (Intl.supportedValuesOf knows calendars, collations,
// currencies, numbering systems, time zones and units, not languages): the plain rule asks it about
// every code of two and three letters, 676 + 17,576 synchronous lookups, 0.2-2.4 s of a blocked event
// loop (a worker's lock and heartbeats stalled meanwhile). So the answers of this rule are recorded,
// with the ICU and CLDR versions they came from, in language-names.ts (`npm run languages` writes it
// again for a new ICU), and a process whose ICU is that one reads them there; any other ICU is asked
// by the plain rule, on first use (test/settings/languages.test.ts holds both to the plain rule's answers).
import { RECORDED } from './language-names.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

// Two tables, each built once on first use: the two-letter codes (the common languages) and the
// three-letter ones, read only when a name is not among the first.
const tables: Partial<Record<2 | 3, Map<string, string>>> = {};

/** Lower-cased name → the name as written by ICU ("english" → "English"), for codes of `length` letters. */
export function languageNames(length: 2 | 3): ReadonlyMap<string, string> {
  const cached = tables[length];
  if (cached) return cached;
  const names = new Map<string, string>();
  for (const [, name] of recordedIsThisIcu() ? recordedNames(length) : icuLanguageNames(length)) {
    names.set(name.toLowerCase(), name);
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

/** The plain rule: [code, name] of each code of `length` letters that this process's ICU names in English. */
export function* icuLanguageNames(length: 2 | 3): Generator<[code: string, name: string]> {
  const display = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
  for (const code of isoCodes(length)) {
    const name = display.of(code);
    // With fallback 'none' an unknown code gives undefined; a name equal to its code is no name.
    if (name && name.toLowerCase() !== code) yield [code, name];
  }
}

/** Whether the recorded names are this process's ICU's: the same ICU and CLDR versions (the data is theirs). */
export function recordedIsThisIcu(): boolean {
  return process.versions.icu === RECORDED.icu && process.versions.cldr === RECORDED.cldr;
}

/** The recorded [code, name] pairs, one "code name" a line. */
function* recordedNames(length: 2 | 3): Generator<[code: string, name: string]> {
  for (const line of RECORDED[length].split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) yield [line.slice(0, space), line.slice(space + 1)];
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
