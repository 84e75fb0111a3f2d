// `feedsync emulator` as a person runs it: it prints where it listens, answers, and stops on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/api/schemas.js';
import { rawPost } from '../helpers/raw-post.js';

const BIN = fileURLToPath(new URL('../../bin/feedsync.js', import.meta.url));

async function startCli(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'emulator', '--port', '0', ...args], {
    env: { ...process.env, CHATBOT_SECRET_KEY: '', CHATBOT_SESSION_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (c) => {
      stderr += c;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { url, stderr: () => stderr, stdout: () => stdout, stop: async () => (child.kill('SIGTERM'), exited) };
}

describe('feedsync emulator', () => {
  it('--data-file keeps its listings across a restart (the compose volume)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'emu-data-')), 'emulator.json');
    const first = await startCli(['--chatbots', 'SN-1', '--data-file', file]);
    try {
      expect(first.stderr()).toContain(`data kept in ${file}`);
      const created = await rawPost(
        first.url + ENDPOINTS.create,
        { ...listing(), MLSNumber: 'KEPT' },
        { authorization: 'dev-secret-key' },
      );
      expect(created.body).toMatchObject({ Success: true });
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await startCli(['--chatbots', 'SN-1', '--data-file', file]);
    try {
      const page = await rawPost(
        second.url + ENDPOINTS.list,
        { SerialNumber: 'SN-1', PageSize: 10 },
        { 'chatrobot-sessionkey': 'dev-session-key' },
      );
      expect(page.body.Data?.List?.map((l) => l.MLSNumber)).toEqual(['KEPT']);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  it('listens on the port asked (0: any), prints its URL and keys, answers with them, and stops on SIGTERM', async () => {
    const emu = await startCli(['--max-page-size', '1', '--chatbots', 'SN-1']);
    const { url } = emu;
    let code: number | null;
    try {
      expect(emu.stderr()).toContain('dev-secret-key');
      expect(emu.stderr()).toContain('dev-session-key');
      const auth = { authorization: 'dev-secret-key' };
      for (const mls of ['A', 'B']) {
        const created = await rawPost(url + ENDPOINTS.create, { ...listing(), MLSNumber: mls }, auth);
        expect(created.body).toMatchObject({ Success: true, Code: 200 });
      }
      const page = await rawPost(
        url + ENDPOINTS.list,
        { SerialNumber: 'SN-1', PageSize: 10 },
        { 'chatrobot-sessionkey': 'dev-session-key' },
      );
      expect(page.body.Data?.VirtualCount).toBe(2);
      expect(page.body.Data?.List).toHaveLength(1); // --max-page-size 1
      const unknown = await rawPost(url + ENDPOINTS.create, { ...listing(), SerialNumber: 'SN-2' }, auth);
      expect(unknown.status).toBe(404);
    } finally {
      code = await emu.stop();
    }
    expect(code).toBe(0);
    expect(emu.stdout()).toBe('');
  });
});

function listing() {
  return {
    SerialNumber: 'SN-1',
    SaleType: 'for_sale',
    Status: 'Active',
    CurrencySymbol: '$',
    PropertyType: 'Condo',
    Bedrooms: 1,
    Bathrooms: 1,
    Url: 'https://example.com/x',
    MLSNumber: 'X',
    YearBuilt: 2001,
    DaysOnMarket: 1,
    LotArea: 0,
    BuildingArea: 700,
    AreaUnit: 'Square Feet',
    ParkingSpots: 0,
  };
}
