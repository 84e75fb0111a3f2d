// The command line as a new user meets it: --version, init (a starter config that works as it is),
// feed preview --key (one listing explained end to end), readable logs never glued to the progress line.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { createLogger, wantsPretty } from '../../src/log.js';
import { createProgressLine, progressText } from '../../src/sync/report/progress.js';
import { createStatusLine } from '../../src/terminal.js';
import { feedsync } from '../settings/run-cli.js';

function sink() {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk, _enc, done) {
        text += String(chunk);
        done();
      },
    }),
    { isTTY: true },
  );
  return { stream, text: () => text };
}

describe('feedsync --version', () => {
  it("prints package.json's version and exits 0", async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    const r = await feedsync(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });
});

describe('feedsync init, then the commands it suggests', () => {
  it('writes a commented config and a sample feed that sync, preview --key and a second init treat as a user expects', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-init-'));
    const config = join(dir, 'feedsync.yaml');
    const init = await feedsync(['init', '--config', config]);
    expect(init.code).toBe(0);
    expect(init.stderr).toContain('wrote');
    expect(init.stderr).toContain(`feedsync sync --config`);
    const text = await readFile(config, 'utf8');
    expect(text.split('\n').filter((l) => l.trim().startsWith('#')).length).toBeGreaterThan(10);
    const parsed = parseConfig(text, config, {});
    expect(parsed.feeds.map((f) => f.name)).toEqual(['my-feed']);

    // never overwrites without --force
    const again = await feedsync(['init', '--config', config]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('exists already');
    expect(again.stderr).toContain('--force');

    const sync = await feedsync(['sync', '--config', config, '--json']);
    expect(sync.code).toBe(0);
    expect(JSON.parse(sync.stdout).reports[0]).toMatchObject({
      feed: 'my-feed',
      outcome: 'ok',
      counts: { created: 3, rejected: 0 },
    });

    // a price change in the feed: preview --key tells the whole story of that listing
    const feedFile = join(dir, 'feeds', 'listings.csv');
    await writeFile(feedFile, (await readFile(feedFile, 'utf8')).replace('"$450,000"', '"$465,000"'));
    const explained = await feedsync(['feed', 'preview', '--config', config, '--feed', 'my-feed', '--key', 'MY1001']);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('1. source record (feeds/listings.csv:2, record 0)');
    expect(explained.stdout).toMatch(/ListPrice\s+\$465,000/);
    expect(explained.stdout).toMatch(/2\. mapped listing:[\s\S]*SalePrice\s+465000/);
    expect(explained.stdout).toMatch(/3\. what the chatbot holds:\n\s+ID \d+:/);
    expect(explained.stdout).toContain('SalePrice: 450000 → 465000');
    expect(explained.stdout).toContain('a sync updates it (1 field(s) differ)');

    const json = await feedsync([
      'feed',
      'preview',
      '--config',
      config,
      '--feed',
      'my-feed',
      '--key',
      'NOPE-1',
      '--json',
    ]);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ key: 'NOPE-1', remote: [], changes: [] });
    expect(doc.verdict).toContain('the feed has no record with this key');

    const unknown = await feedsync(['feed', 'preview', '--config', config, '--feed', 'nope', '--key', 'MY1001']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown feed nope');
  }, 60_000);
});

describe('feed preview of a file in another encoding than the configured one', () => {
  // (a Latin-1 export read as UTF-8 mapped "1 Café St" to "1 Caf\uFFFD St", said nowhere)
  it('warns that listings hold bytes invalid in it, with the first place and field, and the setting', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-encoding-'));
    await writeFile(
      join(dir, 'homes.csv'),
      Buffer.from(
        'MLSNumber,Address,City\nA1,1 Caf\xe9 St,Austin\nA2,2 Oak St,Austin\nA3,3 Pi\xf1a Rd,Austin\n',
        'latin1',
      ),
    );
    await writeFile(
      join(dir, 'feedsync.yaml'),
      [
        'api: { baseUrl: embedded, secretKey: dev-secret-key, sessionKey: dev-session-key }',
        'chatbots: [{ serialNumber: SN-E }]',
        'feeds:',
        '  - name: homes',
        '    chatbot: SN-E',
        '    source: { kind: csv, path: homes.csv }',
        '    mapping:',
        '      fields: { MLSNumber: MLSNumber, Address: Address, City: City, Url: { template: "https://x.test/{MLSNumber}" } }',
        '      defaults: { SaleType: for_sale, Status: Active, CurrencySymbol: $, PropertyType: House, Bedrooms: 3, Bathrooms: 2, YearBuilt: 1990, DaysOnMarket: 1, LotArea: 1, BuildingArea: 1, AreaUnit: Square Feet, ParkingSpots: 0 }',
      ].join('\n'),
    );
    const r = await feedsync(['feed', 'preview', '--feed', 'homes', '--config', join(dir, 'feedsync.yaml')]);
    expect(r.stdout).toContain(
      'warning: 2 record(s) hold bytes that are not valid utf8 (read as U+FFFD; first: homes.csv:2, record 0, Address): the file is in another encoding; set feeds[].source.encoding (csv: latin1 or windows-1252)',
    );
    const json = await feedsync([
      'feed',
      'preview',
      '--feed',
      'homes',
      '--json',
      '--config',
      join(dir, 'feedsync.yaml'),
    ]);
    expect(JSON.parse(json.stdout).invalidText).toEqual({
      records: 2,
      first: 'homes.csv:2, record 0',
      field: 'Address',
    });
    // the sync says it too, in its report (it sent "1 Caf\uFFFD St" and said nothing)
    const sync = await feedsync(['sync', '--config', join(dir, 'feedsync.yaml')]);
    expect(sync.stderr).toContain(
      '  warning: 2 record(s) hold bytes that are not valid utf8 (read as U+FFFD; first: homes.csv:2, record 0, Address)',
    );
    // a rerun maps nothing (every record in step by its stamp): nothing to count, nothing said
    const again = await feedsync(['sync', '--config', join(dir, 'feedsync.yaml')]);
    expect(again.stderr).toMatch(/unchanged +3/);
    expect(again.stderr).not.toContain('U+FFFD');
  });
});

describe('logs and progress on a terminal', () => {
  it('logs human-readable lines on a TTY and JSON elsewhere (LOG_FORMAT decides when set)', () => {
    expect(wantsPretty({ isTTY: true }, undefined)).toBe(true);
    expect(wantsPretty({ isTTY: false }, undefined)).toBe(false);
    expect(wantsPretty({ isTTY: true }, 'json')).toBe(false);
    expect(wantsPretty({ isTTY: false }, 'pretty')).toBe(true);
    const out = sink();
    createLogger({ destination: out.stream, pretty: true }).warn({ feed: 'austin' }, 'feed slow to answer');
    expect(out.text()).toMatch(/WARN.*feed slow to answer/);
    expect(() => JSON.parse(out.text())).toThrow();
  });

  it('writes a log line above the progress line, then draws the progress again', () => {
    const out = sink();
    const line = createStatusLine(out.stream);
    let t = 0;
    const progress = createProgressLine(out.stream, { everyMs: 0, line, now: () => t });
    progress.onProgress({ feed: 'austin', phase: 'write', done: 0, total: 40 });
    t = 2000;
    progress.onProgress({ feed: 'austin', phase: 'write', done: 20, total: 40 });
    line.above('WARN: a log line');
    const text = out.text();
    // every log line starts on a cleared line and ends with a newline; the progress comes back after it
    expect(text).toContain(
      'austin: 20/40 writes done (50%), 10/s, about 2 s left\r\x1b[KWARN: a log line\naustin: 20/40 writes done (50%), 10/s, about 2 s left',
    );
    progress.clear();
    expect(out.text().endsWith('\r\x1b[K')).toBe(true);
  });

  it('shows no total where none is known, and no rate before there is one', () => {
    expect(progressText({ feed: 'f', phase: 'feed', done: 1000 }, { at: 0, done: 0 }, 100)).toBe(
      'f: 1000 records read',
    );
    expect(progressText({ feed: 'f', phase: 'feed', done: 3000 }, { at: 0, done: 1000 }, 2000)).toBe(
      'f: 3000 records read, 1000/s',
    );
  });

  it('prints nothing when stderr is not a terminal', () => {
    const out = sink();
    const progress = createProgressLine({ isTTY: false }, { everyMs: 0, line: createStatusLine(out.stream) });
    progress.onProgress({ feed: 'f', phase: 'feed', done: 10 });
    expect(out.text()).toBe('');
  });
});
