// Issue 49, point 3: a hostile `$metadata` froze the worker. The CSDL tag scan (a regex,
// `<(Property|…)\b([^>]*)>`) ran on to the document's end at every unclosed `<Property`: 1.52 MB
// took 102 s of CPU, the event loop blocked 58 s (no /healthz, BullMQ locks lost). Now: a linear
// scan (src/feeds/reso/csdl-scan.ts) that lets the event loop run between slices, of a document
// capped by source.maxMetadataBytes.
//
// Times are compared, never asserted: each hostile document's parse against a plain CSDL document of
// the same size parsed in the same test (CPU time, median of three); and the event loop's turns
// during a parse are counted. The CSDL written is OData 4.0's (EntityType, Property, EnumType,
// Member, Annotation; test/helpers/csdl.ts), as RESO servers publish theirs.
import { describe, expect, it } from 'vitest';
import { FeedSource } from '../../src/feeds/config-schema.js';
import { SLICE } from '../../src/feeds/reso/csdl-scan.js';
import { parseMetadata, readMetadata } from '../../src/feeds/reso/reso-metadata.js';
import { resoPageClient } from '../../src/feeds/reso/reso-pages.js';
import type { ResoSource } from '../../src/feeds/config-schema.js';
import { silentLogger } from '../../src/log.js';
import { failure } from '../helpers/failure.js';
import { useHostileServers } from '../helpers/hostile-server.js';

const MB = 1024 * 1024;
const HEAD =
  '<?xml version="1.0" encoding="utf-8"?><edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices>' +
  '<Schema Namespace="org.reso.metadata" xmlns="http://docs.oasis-open.org/odata/ns/edm">' +
  '<EntityContainer Name="Default"><EntitySet Name="Property" EntityType="org.reso.metadata.Property"/></EntityContainer>';
const TAIL = '</EntityType></Schema></edmx:DataServices></edmx:Edmx>';

/**
 * `piece` repeated to about `bytes`, inside a CSDL frame whose Property entity type has ListingKey;
 * `open`: the document ends there, with no `>` after the pieces (a hostile one need not close).
 */
function csdlOf(bytes: number, piece: (i: number) => string, open = false): string {
  const parts: string[] = [
    HEAD,
    '<EntityType Name="Property"><Key><PropertyRef Name="ListingKey"/></Key><Property Name="ListingKey" Type="Edm.String"/>',
  ];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const p = piece(i);
    parts.push(p);
    size += p.length;
  }
  if (!open) parts.push(TAIL);
  return parts.join('');
}

/** A Data Dictionary's worth of well-formed fields, annotations and enum members. */
const plain = (bytes: number) =>
  csdlOf(
    bytes,
    (i) =>
      `<Property Name="Field${i}" Type="Edm.String" MaxLength="255"><Annotation Term="RESO.OData.Metadata.LookupName" String="List${i % 50}"/></Property>` +
      (i % 20 === 0
        ? `<EnumType Name="Enum${i}"><Member Name="A${i}" Value="1"/><Member Name="B${i}" Value="2"/></EnumType>`
        : ''),
  );

/** the issue's: `<Property` after `<Property`, none closed, and no `>` after them */
const unclosed = (bytes: number) => csdlOf(bytes, (i) => `<Property Name="F${i}" Type="Edm.String" `, true);

/** Hostile documents (the entity set and key declared before the hostile part: still read). */
const HOSTILE: Array<[string, (bytes: number) => string]> = [
  ['unclosed <Property tags', unclosed],
  [
    'unclosed <Property tags before a closed document',
    (bytes) => csdlOf(bytes, (i) => `<Property Name="F${i}" Type="Edm.String" `),
  ],
  [
    'nesting a hundred thousand levels deep',
    (bytes) => csdlOf(bytes, (i) => `<EntityType Name="E${i}"><Property Name="P${i}" Type="Edm.String">`),
  ],
  [
    'one tag of many attributes, never closed',
    (bytes) => csdlOf(bytes, (i) => (i === 0 ? '<Property ' : `a${i}="v" `), true),
  ],
  ['an unclosed quote', (bytes) => csdlOf(bytes, (i) => (i === 0 ? '<Property Name="' : 'x'.repeat(64)))],
  ['an unclosed comment', (bytes) => csdlOf(bytes, (i) => (i === 0 ? '<!-- ' : '<Property Name="x" '.repeat(4)))],
];

/** CPU microseconds of one parse (user + system), the median of three. */
async function cpuOf(xml: string): Promise<number> {
  const runs: number[] = [];
  for (let n = 0; n < 3; n++) {
    const before = process.cpuUsage();
    await parseMetadata(xml);
    const used = process.cpuUsage(before);
    runs.push(used.user + used.system);
  }
  return runs.sort((a, b) => a - b)[1]!;
}

describe('a hostile $metadata is parsed in linear time (5 MB documents)', () => {
  const normal = plain(5 * MB);

  it.each(HOSTILE)(
    '%s: no more CPU than a plain document of the same size, within a small factor',
    async (_what, make) => {
      const hostile = make(5 * MB);
      expect(hostile.length).toBeGreaterThanOrEqual(5 * MB);
      const base = await cpuOf(normal);
      const cost = await cpuOf(hostile);
      // the regex scan: 1.52 MB of unclosed tags took 102 s of CPU, thousands of times a plain document's
      expect(cost / base).toBeLessThan(5);
      // what could be read is read: the key field, declared before the hostile part
      expect((await parseMetadata(hostile)).sets.get('Property')?.get('ListingKey')).toBe('Edm.String');
    },
  );

  it('the event loop runs between slices of a parse: a 5 MB document lets it turn at least once per slice', async () => {
    const hostile = unclosed(5 * MB);
    let turns = 0;
    let running = true;
    const spin = () => {
      turns++;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const parsed = parseMetadata(hostile);
    await parsed;
    running = false;
    expect(turns).toBeGreaterThanOrEqual(Math.floor(hostile.length / SLICE) - 1);
  });

  it('reads a plain document whole: fields, lookup names, enum members', async () => {
    const meta = await parseMetadata(plain(64 * 1024));
    const fields = meta.sets.get('Property')!;
    expect(fields.get('Field7')).toBe('Edm.String');
    expect(meta.lookupNames.get('Property')!.get('Field7')).toBe('List7');
    expect(meta.enums.get('Enum20')).toEqual(['A20', 'B20']);
  });
});

describe('$metadata over HTTP', () => {
  const hostile = useHostileServers();
  const sourceOf = (url: string, more: Record<string, unknown> = {}) =>
    FeedSource.parse({
      kind: 'reso',
      url: `${url}reso/odata/Property`,
      retries: 0,
      timeoutMs: 20_000,
      ...more,
    }) as ResoSource;
  const ctx = { baseDir: '/', logger: silentLogger };

  it('a 1.5 MB hostile $metadata (the issue’s) is read, with the fields it could read', async () => {
    const body = unclosed(1.5 * MB);
    const server = await hostile(
      (_req, res) => void res.writeHead(200, { 'content-type': 'application/xml' }).end(body),
    );
    const source = sourceOf(server.url);
    const meta = await readMetadata(resoPageClient(source, ctx), source.url!, source.resource);
    expect(meta.sets.get('Property')?.get('ListingKey')).toBe('Edm.String');
  });

  it('a $metadata past source.maxMetadataBytes is refused, naming its URL and the cap; the default cap is well below a page’s', async () => {
    const body = plain(2 * MB);
    const server = await hostile(
      (_req, res) => void res.writeHead(200, { 'content-type': 'application/xml' }).end(body),
    );
    const source = sourceOf(server.url, { maxMetadataBytes: MB });
    const err = await failure(
      readMetadata(resoPageClient(source, ctx), source.url!, source.resource),
      'the $metadata read',
    );
    expect(err.message).toMatch(
      /reso\/odata\/\$metadata.*the server's \$metadata is larger than source\.maxMetadataBytes \(1048576 bytes\)/,
    );
    const defaults = sourceOf(server.url);
    expect(defaults.maxMetadataBytes).toBe(16 * MB);
    expect(defaults.maxMetadataBytes * 8).toBeLessThanOrEqual(defaults.maxPageBytes);
  });
});
