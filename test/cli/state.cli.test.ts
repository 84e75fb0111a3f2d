// `feedsync state export|import`: the state store as one JSON document, for people. A state.json of
// the former format (written by the JSON store at b1b5025) is imported when the store is first
// opened; export writes it back as it was; an edited document imported replaces the state whole.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { holdOpen } from '../../src/state/open-lock.js';
import { feedsync } from '../settings/run-cli.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');

const FORMER = fileURLToPath(new URL('../state/fixtures/state-b1b5025.json', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function setup(extra: string[] = []): Promise<{ dir: string; config: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-state-cli-'));
  dirs.push(dir);
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      'api: { baseUrl: embedded, secretKey: dev-secret-key, sessionKey: dev-session-key }',
      ...extra,
      'chatbots: [{ serialNumber: SN-F }]',
    ].join('\n'),
  );
  return { dir, config };
}

describe('feedsync state export | import', () => {
  it('exports the state imported from a former state.json, and imports an edited document in its place', async () => {
    const { dir, config } = await setup();
    const former = await readFile(FORMER, 'utf8');
    await mkdir(join(dir, '.feedsync'));
    await writeFile(join(dir, '.feedsync', 'state.json'), former);

    const exported = await feedsync(['state', 'export', '--config', config]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual(JSON.parse(former));
    expect(exported.stderr).toContain(`exported 8 namespaces, 11 entries from ${join(dir, '.feedsync', 'state.lmdb')}`);
    expect((await readdir(join(dir, '.feedsync'))).sort()).toEqual([
      'locks',
      'state.json.migrated',
      'state.lmdb',
      'state.lmdb-lock',
    ]);

    const edited = JSON.parse(former) as Record<string, Record<string, string>>;
    delete edited['fp:homes']!['K1'];
    delete edited['alerts'];
    edited['missing:homes'] = { K9: '2026-11-20T00:00:00.000Z' };
    await writeFile(join(dir, 'edited.json'), JSON.stringify(edited));
    const imported = await feedsync(['state', 'import', join(dir, 'edited.json'), '--config', config]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain('imported 7 namespaces, 9 entries');
    expect((await feedsync(['state', 'export', join(dir, 'out.json'), '--config', config])).code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'out.json'), 'utf8'))).toEqual(edited);

    // a document that is not the state's shape changes nothing: the command's input is wrong (exit 2, as a config's)
    await writeFile(join(dir, 'bad.json'), '{"fp:homes":{"K1":1}}');
    const bad = await feedsync(['state', 'import', join(dir, 'bad.json'), '--config', config]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      `The state document ${join(dir, 'bad.json')} is JSON but not feedsync state ("fp:homes" → "K1" is not a string)`,
    );
    // nor does one that is not JSON: the file and where in it as FILE:LINE:COLUMN (an editor or a terminal opens it
    // there), whatever JSON.parse's words say (they name no place for a bad token)
    const broken = [
      ['token.json', '{\n  "fp:homes": {\n    "K1": x\n  }\n}', ':3:11', '("x" cannot stand there; 35 characters)'],
      ['comma.json', '{"fp:homes": {"K1": "a",}}', ':1:25', '("}" cannot stand there; 26 characters)'],
      ['short.json', '{"fp:homes": {"K1": "a"', ':1:24', '(it ends there; 23 characters)'],
    ];
    for (const [name, text, at, what] of broken) {
      await writeFile(join(dir, name!), text!);
      const r = await feedsync(['state', 'import', join(dir, name!), '--config', config]);
      expect(r.code, name).toBe(2);
      expect(r.stderr, name).toBe(
        `feedsync: The state document ${join(dir, name!)}${at} is not valid JSON ${what}: it was cut short or edited by hand. Export the state (feedsync state export), edit that document and import it again.\n`,
      );
    }
    // on stdin the place is said in words: there is no file to open
    const piped = spawn(process.execPath, [BIN, 'state', 'import', '--config', config], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    let pipedErr = '';
    piped.stderr.on('data', (d: Buffer) => (pipedErr += d.toString()));
    piped.stdin.end('{"fp:homes": x}');
    const [pipedCode] = await once(piped, 'exit');
    expect(pipedCode).toBe(2);
    expect(pipedErr).toContain(
      'The state document on stdin (line 1, column 14) is not valid JSON ("x" cannot stand there; 15 characters)',
    );
    // a folder where the document was expected is the input's fault too (it said "Point the config at a file", exit 1)
    await mkdir(join(dir, 'folder.json'));
    const folder = await feedsync(['state', 'import', join(dir, 'folder.json'), '--config', config]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toBe(
      `feedsync: The state document ${join(dir, 'folder.json')} is a folder, not a file. Give the path of a document \`feedsync state export\` wrote; nothing was imported.\n`,
    );
    expect(JSON.parse((await feedsync(['state', 'export', '--config', config])).stdout)).toEqual(edited);
  }, 180_000);

  // (it said "Check the path (relative paths are relative to the config file)": FILE is the command
  // line's, relative to the current folder, and ENOENT was said twice)
  it('import of a FILE that does not exist names where it looked, relative to the current folder; nothing imported', async () => {
    const { dir, config } = await setup();
    const r = await feedsync(['state', 'import', 'nope.json', '--config', config], {}, { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `feedsync: The state document nope.json does not exist (looked for ${join(dir, 'nope.json')}; FILE is relative to the current folder). Give the path of a document \`feedsync state export\` wrote; nothing was imported.\n`,
    );
  });

  // (it waited silent, up to 10 minutes, while a sync held the state file open)
  it('export while another process holds the state file open says at once that it waits, and for whom', async () => {
    const { dir, config } = await setup();
    const hold = await holdOpen(join(dir, '.feedsync', 'state.lmdb'));
    try {
      const child = spawn(process.execPath, [BIN, 'state', 'export', '--config', config], {
        env: { ...process.env, LOG_LEVEL: 'warn' },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = once(child, 'exit');
      for (let i = 0; i < 200 && !stderr.includes('waiting'); i++) await sleep(50);
      child.kill('SIGINT');
      await exited;
      expect(stderr).toContain(
        `the state file ${join(dir, '.feedsync', 'state.lmdb')} is open in another feedsync process (PID ${process.pid} on ${hostname()}, since `,
      );
      expect(stderr).toContain('waiting for it to close the file, up to 10 min');
    } finally {
      await hold.release();
    }
  }, 60_000);

  it('with redis configured, works on the state file only when asked (--no-redis)', async () => {
    const { config } = await setup(['redis: { url: "redis://127.0.0.1:9" }']);
    const refused = await feedsync(['state', 'export', '--config', config]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('this config keeps its state in Redis');
    const asked = await feedsync(['state', 'export', '--config', config, '--no-redis']);
    expect([asked.code, JSON.parse(asked.stdout)]).toEqual([0, {}]);
  }, 120_000);
});
