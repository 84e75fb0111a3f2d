// The streaming record builder against fast-xml-parser, the parser the XML reader used before and
// whose record shape the presets were written for: on generated well-formed records, cut into
// chunks anywhere, both give the same record; a stray "<" or "&" put into one is refused by both.
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { createXmlScanner, decodeXmlText, type ScannedRecord } from '../../src/feeds/xml/xml-scanner.js';

const oracle = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  tagValueProcessor: (_name: string, value: string) => decodeXmlText(value),
  attributeValueProcessor: (_name: string, value: string) => decodeXmlText(value),
});

// (fast-xml-parser throws on `constructor` and `__proto__`; xml-hostile.test.ts covers those)
const name = fc.constantFrom('A', 'B', 'C', 'commons:D', 'e-1');
const textPiece = fc.constantFrom(
  'a',
  'Zz',
  ' ',
  '\n  ',
  '&amp;',
  '&lt;',
  '&gt;',
  '&quot;',
  '&#65;',
  '&#x20AC;',
  '&nbsp;',
  'é€',
  '"',
  "'",
  '>',
  '0042',
);
const text = fc.array(textPiece, { maxLength: 6 }).map((a) => a.join(''));
const cdata = fc
  .array(fc.constantFrom('x', '<b>', '&', ' ', '] ', '>'), { maxLength: 5 })
  .map((a) => `<![CDATA[${a.join('')}]]>`);
const attrs = fc.uniqueArray(fc.tuple(fc.constantFrom('id', 'x', 'commons:y'), text), {
  selector: (t) => t[0],
  maxLength: 2,
});

const element: fc.Memo<string> = fc.memo((depth) => {
  const leafContent = fc.oneof(
    text,
    fc.tuple(text, cdata, text).map((t) => t.join('')),
  );
  const content =
    depth <= 1
      ? leafContent
      : fc.oneof(
          leafContent,
          fc.array(element(depth - 1), { minLength: 1, maxLength: 4 }).map((kids) => kids.join('\n ')),
        );
  return fc.tuple(name, attrs, content, fc.boolean()).map(([n, as, c, selfClose]) => {
    const a = as.map(([k, v]) => ` ${k}="${v.replace(/"/g, '&quot;')}"`).join('');
    return selfClose && c === '' ? `<${n}${a}/>` : `<${n}${a}>${c}</${n}>`;
  });
});

const record = fc
  .tuple(attrs, fc.array(element(3), { maxLength: 5 }))
  .map(
    ([as, kids]) =>
      `<Listing${as.map(([k, v]) => ` ${k}="${v.replace(/"/g, '&quot;')}"`).join('')}>\n  ${kids.join('\n  ')}\n</Listing>`,
  );

function scan(doc: string, cuts: number[]): ScannedRecord[] {
  const s = createXmlScanner({ recordPath: 'Listings.Listing', label: 'x' });
  const out: ScannedRecord[] = [];
  let from = 0;
  for (const cut of [...cuts.map((c) => c % (doc.length + 1)).sort((a, b) => a - b), doc.length]) {
    out.push(...s.push(doc.slice(from, cut)));
    from = cut;
  }
  return [...out, ...s.end()];
}

function expected(snippet: string): unknown {
  const data = (oracle.parse(snippet) as Record<string, unknown>).Listing;
  return data !== null && typeof data === 'object' ? data : { '#text': data };
}

describe('the XML record builder', () => {
  it('builds what fast-xml-parser builds, whatever the chunk boundaries', () => {
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (records, cuts) => {
          const doc = `<?xml version="1.0"?>\n<Listings>\n${records.join('\n<!-- between -->\n')}\n</Listings>\n`;
          const got = scan(doc, cuts);
          expect(got.map((r) => r.error)).toEqual(records.map(() => undefined));
          expect(got.map((r) => r.data)).toEqual(records.map(expected));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses "&#;", which fast-xml-parser\'s validator lets through', () => {
    const s = createXmlScanner({ recordPath: 'L.R', label: 'x' });
    expect(s.push('<L><R>&#;</R></L>')[0]?.error).toBe('a stray "&" (write &amp;) (line 1)');
  });

  it('refuses a stray "<" or "&" in text, as fast-xml-parser\'s validator does', () => {
    fc.assert(
      fc.property(record, fc.constantFrom('< ', '<1', '& ', '&;', '&a b;'), fc.nat(), (rec, stray, at) => {
        // put the mistake into a text node: just before a close tag (no attribute value or CDATA here holds "</")
        const ends = [...rec.matchAll(/<\//g)].map((m) => m.index);
        const i = ends[at % ends.length]!;
        const bad = rec.slice(0, i) + stray + rec.slice(i);
        expect(XMLValidator.validate(bad)).not.toBe(true);
        const [got] = scan(`<Listings>${bad}</Listings>`, []);
        expect(got?.error).toMatch(/stray/);
      }),
      { numRuns: 200 },
    );
  });
});
