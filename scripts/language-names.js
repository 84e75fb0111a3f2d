#!/usr/bin/env node
// `npm run languages`: records in src/settings/language-names.ts the language names this Node's ICU
// gives (the plain rule of src/settings/languages.ts, icuLanguageNames), with its ICU and CLDR
// versions, so a process on that ICU reads them instead of making 18,252 lookups on first use. Run it
// when a new Node ships another ICU (test/settings/languages.test.ts skips its lookup count on any other).
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { icuLanguageNames } from '../src/settings/languages.ts';

const lines = (length) => [...icuLanguageNames(length)].map(([code, name]) => `${code} ${name}`).join('\n');
for (const [length, text] of [2, 3].map((n) => [n, lines(n)])) {
  if (text.includes('`') || text.includes('${')) throw new Error(`a ${length}-letter name would end the template`);
}
const file = resolve(import.meta.dirname, '../src/settings/language-names.ts');
writeFileSync(
  file,
  `// Written by \`npm run languages\` (scripts/language-names.js): the language names ICU ${process.versions.icu}
// (CLDR ${process.versions.cldr}) gives in English to the codes of two and of three letters, one "code name"
// a line, by the plain rule of languages.ts (icuLanguageNames). Do not edit; run the script again.
export const RECORDED = {
  icu: '${process.versions.icu}',
  cldr: '${process.versions.cldr}',
  2: \`${lines(2)}\`,
  3: \`${lines(3)}\`,
} as const;
`,
);
process.stdout.write(`${file}: ICU ${process.versions.icu}, CLDR ${process.versions.cldr}\n`);
