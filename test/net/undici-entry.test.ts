// The bundle's undici (scripts/undici-entry.js, put in place of `undici` by scripts/bundle.js) against
// undici's index: it exports every name src/ imports of undici, Agent is the index's own, and its
// request answers as the index's request does, or fails as it fails, whatever the URL and options.
// Its HTTP/2 client's stand-in for node:http2 (scripts/bundle.js lazyHttp2Source) has node:http2's
// constants and requires it at the first connect() only.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as undici from 'undici';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Parts = Pick<typeof undici, 'Agent' | 'request'>;
const root = fileURLToPath(new URL('../../', import.meta.url));
// (plain JavaScript beside the build scripts: its names are checked below, against the index's)
const entry: Parts = await import(new URL('scripts/undici-entry.js', `file://${root}`).href);

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => res.end(JSON.stringify({ method: req.method, url: req.url, body })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The names src/ imports (or re-exports) from 'undici' as values (not `type` ones). */
function namesImported(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.ts')) {
        for (const m of readFileSync(join(dir, e.name), 'utf8').matchAll(
          /^(?:import|export) \{([^}]*)\} from 'undici';$/gm,
        ))
          for (const n of m[1]!.split(',').map((s) => s.trim()))
            if (n && !n.startsWith('type ')) names.add(n.split(' as ')[0]!);
      }
    }
  };
  walk(join(root, 'src'));
  walk(join(root, 'jobs'));
  return [...names].sort();
}

/** What a request came to: the server's answer, or the failure's class and message. */
async function outcome(request: Parts['request'], ...args: Parameters<Parts['request']>): Promise<unknown> {
  try {
    const res = await request(...args);
    return { status: res.statusCode, body: await res.body.text() };
  } catch (err) {
    return { failed: (err as Error).constructor.name, message: (err as Error).message };
  }
}

describe('the bundle’s undici', () => {
  it('exports every name src/ imports of undici, and Agent is the index’s own', () => {
    const names = namesImported();
    expect(names).toEqual(['Agent', 'request']);
    expect(Object.keys(entry).sort()).toEqual(names);
    expect(entry.Agent).toBe(undici.Agent);
  });

  it('request answers as the index’s does, or fails as it fails', async () => {
    const agent = new undici.Agent();
    try {
      const cases: Array<Parameters<Parts['request']>> = [
        [`${base}/a?b=1`, { method: 'GET' }],
        [new URL(`${base}/u/v`), { method: 'POST', body: 'x=1', dispatcher: agent }],
        [`${base}/put`, { body: 'implied PUT' }],
        [base, { method: 'DELETE', dispatcher: agent }],
        ['ftp://127.0.0.1/x', { method: 'GET' }],
        ['not a url', { method: 'GET' }],
      ];
      for (const args of cases)
        expect(await outcome(entry.request, ...args), JSON.stringify(args[0])).toEqual(
          await outcome(undici.request, ...args),
        );
    } finally {
      await agent.close();
    }
  });
});

describe('the bundle’s undici HTTP/2 client (node:http2 required at its first connect)', async () => {
  const bundle: {
    HTTP2_REQUIRE: string;
    lazyHttp2Module: () => string;
    lazyHttp2Source: (text: string, path?: string) => string;
  } = await import(new URL('scripts/bundle.js', `file://${root}`).href);
  const clientH2 = readFileSync(createRequire(import.meta.url).resolve('undici/lib/dispatcher/client-h2.js'), 'utf8');

  it('has node:http2’s constants, and requires node:http2 only when it connects', () => {
    const required: string[] = [];
    const fakeHttp2 = { connect: (...args: unknown[]) => ({ connected: args }) };
    const make = new Function('require', `return ${bundle.lazyHttp2Module()}`) as (r: (id: string) => unknown) => {
      constants: unknown;
      connect: (...args: unknown[]) => unknown;
    };
    const stand = make((id) => (required.push(id), fakeHttp2));
    expect(stand.constants).toEqual({ ...process.getBuiltinModule('node:http2').constants });
    expect(required).toEqual([]);
    expect(stand.connect('https://h2.test', { a: 1 })).toEqual({ connected: ['https://h2.test', { a: 1 }] });
    expect(required).toEqual(['node:http2']);
  });

  it('replaces the one require of node:http2 in undici’s client-h2.js, and refuses a client-h2.js without it', () => {
    expect(clientH2.split(bundle.HTTP2_REQUIRE)).toHaveLength(2);
    const lazy = bundle.lazyHttp2Source(clientH2);
    expect(lazy).not.toContain(bundle.HTTP2_REQUIRE);
    expect(lazy).toContain(`http2 = ${bundle.lazyHttp2Module()}`);
    expect(() => bundle.lazyHttp2Source(clientH2.replace(bundle.HTTP2_REQUIRE, 'http2 = {}'))).toThrow(/no one/);
  });
  it('is what `node scripts/bundle.js ENTRY COMPILED OUTDIR` bundles (the sync bench builds so), and runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'feedsync-undici-bundle-'));
    try {
      writeFileSync(
        join(dir, 'entry.js'),
        "import { Agent, request } from 'undici';\nprocess.stdout.write(typeof Agent + ' ' + typeof request);\n",
      );
      const script = join(root, 'scripts/bundle.js');
      const nodeModules = join(root, 'node_modules');
      execFileSync(process.execPath, [script, join(dir, 'entry.js'), dir, join(dir, 'bundle'), nodeModules]);
      const text = readdirSync(join(dir, 'bundle'))
        .filter((f) => f.endsWith('.js'))
        .map((f) => readFileSync(join(dir, 'bundle', f), 'utf8'))
        .join('\n');
      expect(text).toContain('"NGHTTP2_CANCEL": 8'); // (the stand-in's constants)
      expect(text).not.toMatch(/http2 = __require\("node:http2"\)/);
      symlinkSync(nodeModules, join(dir, 'node_modules'));
      expect(execFileSync(process.execPath, [join(dir, 'bundle/entry.js')], { encoding: 'utf8' })).toBe(
        'function function',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
