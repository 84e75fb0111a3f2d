// What a person sees for each config mistake, through the real CLI (`feedsync config check`):
// the file and the line of the mistake, and the fix. Exit status 2 for every one.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';

const GOOD = `# a config with one of everything
api:
  baseUrl: http://127.0.0.1:8787
  secretKey: \${CHATBOT_SECRET_KEY}
  sessionKey: \${CHATBOT_SESSION_KEY}
  timeoutMs: 30000
chatbots:
  - serialNumber: SN-1
    schedule: { settings: "0 * * * *", tz: America/Chicago }
    settings:
      Name: Oak Realty
      AIResponseLanguage: English
feeds:
  - name: austin
    chatbot: SN-1
    keyBy: MLSNumber
    mapping: { preset: reso }
    source: { kind: csv, path: austin.csv }
    deletes: { maxFraction: 0.25 }
    schedule: { cron: "*/10 * * * *", tz: America/Chicago }
`;

const ENV = { CHATBOT_SECRET_KEY: 'k-secret-1', CHATBOT_SESSION_KEY: 'k-session-1' };

/** Writes `text` (and the feed file unless told not to) to a fresh folder; returns the config path. */
async function configFile(text: string, opts: { feedFile?: boolean } = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-msg-'));
  if (opts.feedFile !== false) await writeFile(join(dir, 'austin.csv'), 'MLSNumber\nA1\n');
  const file = join(dir, 'feedsync.yaml');
  await writeFile(file, text);
  return file;
}

/** 1-based line of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const i = text.split('\n').findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`no line with ${needle}`);
  return i + 1;
}

async function check(text: string, env: NodeJS.ProcessEnv = ENV, opts: { feedFile?: boolean } = {}) {
  const file = await configFile(text, opts);
  const r = await feedsync(['config', 'check', '--config', file], env);
  return { ...r, file };
}

describe('config check: every mistake named with its line and fix', () => {
  it('passes the good config (exit 0)', async () => {
    const r = await check(GOOD);
    expect(r.stderr).toContain('is valid: 1 feed(s), 1 chatbot(s)');
    expect(r.code).toBe(0);
  });

  it('a typo’d key: the key’s own line and the nearest known key', async () => {
    const text = GOOD.replace('    keyBy: MLSNumber', '    keyby: MLSNumber');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, 'keyby')}: feeds[0].keyby is not a known key; did you mean keyBy?`,
    );
  });

  it('a missing required field is "required" (chatbot names its alternative, chatbots)', async () => {
    const text = GOOD.replace('    chatbot: SN-1\n', '');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, '- name: austin')}: feeds[0].chatbot is required, or chatbots (records routed to several chatbots by where)\n`,
    );
  });

  it('chatbot and chatbots both: the error names both', async () => {
    const text = GOOD.replace('    chatbot: SN-1\n', '    chatbot: SN-1\n    chatbots: [{ serialNumber: SN-2 }]\n');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('feeds[0].chatbots: both chatbot and chatbots are set;');
  });

  it('a bad kind repeats the value and lists the allowed ones', async () => {
    const text = GOOD.replace('kind: csv', 'kind: tsv');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, 'kind: tsv')}: feeds[0].source.kind "tsv" must be one of csv, xml, mits, reso (did you mean csv?)`,
    );
  });

  it('a YAML indentation mistake is one message with its line and a caret', async () => {
    const text = GOOD.replace('    deletes: { maxFraction', '   deletes: { maxFraction');
    const r = await check(text);
    expect(r.code).toBe(2);
    const line = lineOf(text, '   deletes:');
    expect(r.stderr).toBe(
      [
        `feedsync: config ${r.file} is not valid YAML`,
        `  ${r.file}:${line}: column 1: sequence item without - indicator; check the indentation of this line against the lines above it (spaces only)`,
        `    ${line - 1} |     source: { kind: csv, path: austin.csv }`,
        `    ${line} |    deletes: { maxFraction: 0.25 }`,
        `       | ^`,
        '',
      ].join('\n'),
    );
  });

  it('a missing ${VAR} names the variable and its line', async () => {
    const r = await check(GOOD, { CHATBOT_SECRET_KEY: '', CHATBOT_SESSION_KEY: 'k-session-1' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(GOOD, 'secretKey')}: api.secretKey: environment variable CHATBOT_SECRET_KEY is not set; set it, or write \${CHATBOT_SECRET_KEY:-default} for a value that is not secret`,
    );
  });

  it('maxFraction: 25 is explained as a fraction', async () => {
    const text = GOOD.replace('maxFraction: 0.25', 'maxFraction: 25');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, 'maxFraction')}: feeds[0].deletes.maxFraction is a fraction between 0 and 1, not a percentage: write 0.25 for 25% (got 25)`,
    );
  });

  it('chatbot settings are checked with their line and the nearest language', async () => {
    const text = GOOD.replace('AIResponseLanguage: English', 'AIResponseLanguage: Englsh');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, 'Englsh')}: chatbots[0].settings.AIResponseLanguage: is not a language name; did you mean "English"? (got "Englsh")`,
    );
  });

  it('a cron the scheduler refuses and an unknown time zone, with their lines', async () => {
    const text = GOOD.replace('cron: "*/10 * * * *", tz: America/Chicago', 'cron: "0 25 * * *", tz: America/Chicgo');
    const r = await check(text);
    expect(r.code).toBe(2);
    const line = lineOf(text, '0 25');
    expect(r.stderr).toContain(
      `${r.file}:${line}: feeds[0].schedule.cron: "0 25 * * *" is not a cron pattern: value 25 is outside 0-23 (minute hour day-of-month month day-of-week, e.g. "*/10 * * * *")`,
    );
    expect(r.stderr).toContain(
      `${r.file}:${line}: feeds[0].schedule.tz: "America/Chicgo" is not a time zone; did you mean America/Chicago?`,
    );
  });

  it('a cron with a field left out is refused, not read as another schedule', async () => {
    // cron-parser pads a short pattern with "*" in front: "*/10 * * *" would run every minute of
    // every tenth hour, "5" every minute of Fridays
    for (const cron of ['*/10 * * *', '5']) {
      const text = GOOD.replace('cron: "*/10 * * * *"', `cron: "${cron}"`);
      const r = await check(text);
      expect(r.code, cron).toBe(2);
      expect(r.stderr).toContain(
        `${r.file}:${lineOf(text, `cron: "${cron}"`)}: feeds[0].schedule.cron: "${cron}" is not a cron pattern: it has ${cron.split(' ').length} field(s), not 5 (or 6 with seconds first)`,
      );
    }
  });

  it('a schedule more often than worker.minScheduleIntervalSeconds is refused', async () => {
    const text = GOOD.replace('settings: "0 * * * *"', 'settings: "*/5 * * * * *"');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, '*/5 * * * * *')}: chatbots[0].schedule.settings: "*/5 * * * * *" runs every 5 s, more often than worker.minScheduleIntervalSeconds (60 s)`,
    );
    const allowed = await check(`${text}worker:\n  minScheduleIntervalSeconds: 5\n`);
    expect(allowed.code).toBe(0);
  });

  it('numbers are bounded: a timeout past what a timer holds is refused, not made 1 ms', async () => {
    const text = GOOD.replace('timeoutMs: 30000', 'timeoutMs: 3000000000');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, 'timeoutMs')}: api.timeoutMs must be at most 600000 (got 3000000000)`,
    );
  });

  it('a YAML alias bomb is a config error (exit 2), not a crash', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [prev, name] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'e'],
      ['e', 'f'],
    ] as const) {
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const text = `${GOOD}x:\n${levels.map((l) => `  ${l}`).join('\n')}\n`;
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, '*a')}: YAML aliases (*name) expand to more than 100 copies; write the values out or use fewer aliases`,
    );
    expect(r.stderr).not.toMatch(/ReferenceError| {4}at /);
  });

  it('a secret of digits given through ${VAR} stays text', async () => {
    const r = await check(GOOD, { CHATBOT_SECRET_KEY: '0012345678', CHATBOT_SESSION_KEY: '9876543210' });
    expect(r.stderr).toContain('is valid');
    expect(r.code).toBe(0);
  });

  it('a feed file that does not exist is reported', async () => {
    const r = await check(GOOD, ENV, { feedFile: false });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(GOOD, 'austin.csv')}: feeds[0].source.path: austin.csv does not exist (looked for ${join(r.file, '..', 'austin.csv')}; a relative path is relative to the config file's folder)`,
    );
  });

  // the starter config (feedsync init) reads the keys as ${CHATBOT_SECRET_KEY:-dev-secret-key}: pointed
  // at the real service (README, "A first real feed" step 3) without the variables exported, it sent the
  // emulator's development keys, config check said valid, and the 401 said only "check api.secretKey"
  it('an API key left at its ${VAR:-default} while api.baseUrl is a service elsewhere: config check warns, naming the variable (exit 0)', async () => {
    const text = GOOD.replace('${CHATBOT_SECRET_KEY}', '${CHATBOT_SECRET_KEY:-dev-secret-key}').replace(
      'http://127.0.0.1:8787',
      'https://chat.example.com',
    );
    const unset = await check(text, { CHATBOT_SESSION_KEY: 'k-session-1', CHATBOT_SECRET_KEY: '' });
    expect(unset.code).toBe(0);
    expect(unset.stderr).toContain(
      `warning: ${unset.file}:${lineOf(text, 'secretKey')}: api.secretKey is the default written in the config, because CHATBOT_SECRET_KEY is not set, and api.baseUrl is https://chat.example.com: export CHATBOT_SECRET_KEY with the service's key (a default is for the emulator)`,
    );
    expect(unset.stderr).not.toContain('dev-secret-key');
    const json = await feedsync(['config', 'check', '--config', unset.file, '--json'], {
      CHATBOT_SESSION_KEY: 'k-session-1',
      CHATBOT_SECRET_KEY: '',
    });
    expect(JSON.parse(json.stdout).warnings).toEqual([expect.stringContaining('api.secretKey is the default')]);

    const set = await check(text, { ...ENV });
    expect(set.stderr).not.toContain('warning');
    // the emulator on this machine (or embedded) takes the development keys: nothing to warn of
    const local = await check(text.replace('https://chat.example.com', 'http://127.0.0.1:8787'), {
      CHATBOT_SESSION_KEY: 'k-session-1',
      CHATBOT_SECRET_KEY: '',
    });
    expect(local.stderr).not.toContain('warning');
  });

  it('a sync against a service elsewhere with a key left at its default says so before its first call', async () => {
    const text = GOOD.replace('${CHATBOT_SESSION_KEY}', '${CHATBOT_SESSION_KEY:-dev-session-key}').replace(
      'http://127.0.0.1:8787',
      'http://0.0.0.0:1',
    );
    const file = await configFile(text);
    const r = await feedsync(['sync', '--config', file], { CHATBOT_SECRET_KEY: 'k-secret-1', CHATBOT_SESSION_KEY: '' });
    expect(r.code).toBe(1); // nothing listens there
    expect(r.stderr).toContain(
      'api.sessionKey is the default written in the config, because CHATBOT_SESSION_KEY is not set, and api.baseUrl is http://0.0.0.0:1',
    );
  });

  // (config check said valid; the sync then rejected every record: "MLSNumber is missing × 9")
  it("a mapping that gives no value to the feed's key (keyBy) is refused with the feed's line and the fix", async () => {
    const text = GOOD.replace('mapping: { preset: reso }', 'mapping: { fields: { City: City } }');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${lineOf(text, 'mapping: { fields')}: feeds[0].mapping gives no MLSNumber, the feed's key (keyBy MLSNumber): every record would be rejected; map it (mapping.fields.MLSNumber: COLUMN) or use a preset that does`,
    );
    // keyed by URL: Url
    const byUrl = await check(text.replace('keyBy: MLSNumber', 'keyBy: URL'));
    expect(byUrl.stderr).toContain("gives no Url, the feed's key (keyBy URL)");
    // a preset maps it
    expect((await check(GOOD)).code).toBe(0);
  });

  it("a RESO source whose select leaves out a field its mapping reads (the reso preset's HOAMonth reads AssociationFeeFrequency) is refused by config check and by sync, at the select's line, with the fix", async () => {
    const reads =
      'ListingId, StandardStatus, PropertyType, PropertySubType, ListPrice, SecurityDeposit, BedroomsTotal, ' +
      'BathroomsTotalDecimal, BathroomsTotalInteger, LivingArea, LivingAreaUnits, LotSizeArea, LotSizeSquareFeet, ' +
      'LotSizeAcres, LotSizeUnits, YearBuilt, DaysOnMarket, CumulativeDaysOnMarket, ParkingTotal, GarageSpaces, ' +
      'UnparsedAddress, StreetNumber, StreetName, StreetSuffix, City, StateOrProvince, PostalCode, Latitude, Longitude, ' +
      'PublicRemarks, AssociationFee, ' +
      ['ListAgent', 'CoListAgent']
        .flatMap((a) =>
          ['FullName', 'FirstName', 'LastName', 'PreferredPhone', 'DirectPhone', 'Email'].map((f) => a + f),
        )
        .join(', ') +
      ', ' +
      ['ListOffice', 'CoListOffice'].flatMap((o) => ['Name', 'Phone', 'Email'].map((f) => o + f)).join(', ');
    const text = GOOD.replace(
      'source: { kind: csv, path: austin.csv }',
      `source: { kind: reso, url: "https://mls.test/odata", select: [${reads}] }`,
    );
    const line = lineOf(text, 'kind: reso');
    const r = await check(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${r.file}:${line}: feeds[0].source.select must name every field this feed reads: it leaves out AssociationFeeFrequency (read by HOAMonth). ` +
        'A field not selected comes back absent from every record, and what reads it then gives a wrong value or none: ' +
        'add AssociationFeeFrequency to source.select, or, for a field this server does not have, take out what reads it (mapping.fields.HOAMonth: null, or a rule of your own)',
    );
    // the sync's start says the same, before any request
    const sync = await feedsync(['sync', '--config', r.file], ENV);
    expect(sync.code).toBe(2);
    expect(sync.stderr).toContain(`${r.file}:${line}: feeds[0].source.select must name every field this feed reads`);
    // with the field added it passes, but for the display rules' flags, which the select leaves out too: a warning
    const added = await check(text.replace('AssociationFee,', 'AssociationFee, AssociationFeeFrequency,'));
    expect(added.code).toBe(0);
    expect(added.stderr).toContain(
      `warning: ${added.file}: feeds[0].source.select leaves out InternetEntireListingDisplayYN, IDXParticipationYN, InternetAddressDisplayYN, CloseDate, which the display rules (display.purpose idx) read: ` +
        'a field not selected comes back absent, and an absent flag hides nothing',
    );
    const flagged = await check(
      text.replace(
        'AssociationFee,',
        'AssociationFee, AssociationFeeFrequency, InternetEntireListingDisplayYN, IDXParticipationYN, InternetAddressDisplayYN, CloseDate,',
      ),
    );
    expect(flagged.stderr).not.toContain('warning');
  });

  it('a config file that does not exist says where it looked', async () => {
    // (started through npm, as `npx feedsync` is: the hint is written that way, src/format/invocation.ts)
    const r = await feedsync(['config', 'check', '--config', '/nonexistent/feedsync.yaml'], { npm_command: 'exec' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'feedsync: config file /nonexistent/feedsync.yaml does not exist (looked for /nonexistent/feedsync.yaml); give its path with --config, or write a starter one with `npx feedsync init --config /nonexistent/feedsync.yaml`\n',
    );
  });

  it('a first command in a folder without feedsync.yaml says how to make one (feedsync init)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-msg-'));
    const npm = { npm_command: 'exec' };
    const r = await feedsync(['sync', '--config', join(dir, 'feedsync.yaml')], npm);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('or write a starter one with `npx feedsync init --config ');
    const here = await feedsync(['sync'], npm, { cwd: dir });
    expect(here.code).toBe(2);
    expect(here.stderr).toBe(
      `feedsync: config file feedsync.yaml does not exist (looked for ${join(dir, 'feedsync.yaml')}); give its path with --config, or write a starter one with \`npx feedsync init\`\n`,
    );
  });
});
