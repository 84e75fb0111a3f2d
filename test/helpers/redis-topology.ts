// Real Redis topologies for tests, made of `redis-server` processes on free ports in a temp folder
// and stopped by pid: a Redis Cluster of three masters (no replicas), a primary with a replica
// watched by one Sentinel, and a single Redis over TLS with an ACL user (certificates from openssl).
// Timeouts are short so a failover takes about two seconds; persistence is on where a test restarts
// a node (AOF, fsync always), so a restarted node comes back with its data.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from '../server/redis-server.js';

const run = promisify(execFile);

export interface ServerProcess {
  port: number;
  proc: ChildProcess;
  /** SIGKILL, and wait for the exit */
  kill(): Promise<void>;
  /** start again with the same arguments (same port, same folder: its AOF and nodes.conf) */
  restart(): Promise<void>;
}

async function startServer(
  args: string[],
  dir: string,
  port: number,
  ready = /Ready to accept connections|Sentinel ID is/,
): Promise<ServerProcess> {
  const self = { port } as ServerProcess;
  const launch = async () => {
    const proc = spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    self.proc = proc;
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const end = Date.now() + 10_000;
    while (!ready.test(out)) {
      if (Date.now() > end || proc.exitCode !== null)
        throw new Error(`redis-server ${args.join(' ')} did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  self.kill = async () => {
    const { proc } = self;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGKILL');
    await exited;
  };
  self.restart = async () => {
    await self.kill();
    await launch();
  };
  await launch();
  return self;
}

async function poll<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ask<T>(
  port: number,
  fn: (r: Redis) => Promise<T>,
  opts: { tls?: object; username?: string; password?: string } = {},
): Promise<T> {
  const r = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    ...opts,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

export interface TestCluster {
  nodes: ServerProcess[];
  /** startup node URLs for `redis.cluster` */
  urls: string[];
  /** the node serving the slot of `key` */
  nodeOf(key: string): Promise<ServerProcess>;
  /** resolves once every node that runs (all but `except`) says `cluster_state:<state>` */
  clusterState(state: 'ok' | 'fail', except?: ServerProcess): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Three masters, all 16384 slots covered, `cluster_state:ok` on every node. `nodeTimeoutMs`: how
 * long a node may be unreachable before the others mark it failed, and the cluster (a slot
 * uncovered) says `cluster_state:fail` (15 s by default: a node restart leaves the cluster ok).
 */
export async function startCluster(opts: { nodeTimeoutMs?: number } = {}): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'feedsync-cluster-'));
  const nodes: ServerProcess[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      // the bus port defaults to port + 10000, past 65535 for a port the system picked: pick it too
      const busPort = await freePort();
      const nodeDir = join(dir, String(i));
      mkdirSync(nodeDir);
      nodes.push(
        await startServer(
          [
            '--port',
            String(port),
            '--cluster-port',
            String(busPort),
            '--bind',
            '127.0.0.1',
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            String(opts.nodeTimeoutMs ?? 15_000),
            '--appendonly',
            'yes',
            '--appendfsync',
            'always',
            '--save',
            '',
            '--dir',
            nodeDir,
          ],
          nodeDir,
          port,
        ),
      );
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const n of nodes)
      await poll(`cluster state ok on ${n.port}`, () =>
        ask(n.port, async (r) => (await r.cluster('INFO')).includes('cluster_state:ok')),
      );
  } catch (err) {
    for (const n of nodes) await n.kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    nodes,
    urls: nodes.map((n) => `redis://127.0.0.1:${n.port}`),
    nodeOf: async (key) => {
      const slot = await ask(nodes[0]!.port, (r) => r.cluster('KEYSLOT', key));
      const ranges = await ask(nodes[0]!.port, (r) => r.cluster('SLOTS'));
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
      const node = nodes.find((n) => n.port === owner);
      if (!node) throw new Error(`no node serves slot ${slot}`);
      return node;
    },
    clusterState: async (state, except) => {
      for (const n of nodes.filter((x) => x !== except))
        await poll(`cluster_state:${state} on ${n.port}`, () =>
          ask(n.port, async (r) => (await r.cluster('INFO')).includes(`cluster_state:${state}`)),
        );
    },
    stop: async () => {
      for (const n of nodes) await n.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestSentinel {
  primary: ServerProcess;
  replica: ServerProcess;
  sentinel: ServerProcess;
  name: string;
  /** `host:port` of the Sentinel, for `redis.sentinel.sentinels` */
  sentinels: string[];
  /** the port the Sentinel names as primary now */
  primaryPort(): Promise<number>;
  /** SIGKILL the primary; resolves once the Sentinel has promoted the replica */
  failover(): Promise<void>;
  stop(): Promise<void>;
}

/** A primary, a replica in sync with it, and one Sentinel (quorum 1) that knows both. */
export async function startSentinel(): Promise<TestSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'feedsync-sentinel-'));
  const name = 'feedsync-test';
  const started: ServerProcess[] = [];
  try {
    const pPort = await freePort();
    const primary = await startServer(
      [
        '--port',
        String(pPort),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--dbfilename',
        'p.rdb',
      ],
      dir,
      pPort,
    );
    started.push(primary);
    const rPort = await freePort();
    const replica = await startServer(
      [
        '--port',
        String(rPort),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--dbfilename',
        'r.rdb',
        '--replicaof',
        '127.0.0.1',
        String(pPort),
        '--repl-diskless-load',
        'swapdb',
      ],
      dir,
      rPort,
    );
    started.push(replica);
    await poll('the replica in sync', () =>
      ask(rPort, async (r) => (await r.info('replication')).includes('master_link_status:up')),
    );
    const sPort = await freePort();
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${sPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${pPort} 1`,
        `sentinel down-after-milliseconds ${name} 500`,
        `sentinel failover-timeout ${name} 3000`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n'),
    );
    const sentinel = await startServer([conf, '--sentinel'], dir, sPort);
    started.push(sentinel);
    await poll('the Sentinel to know the replica', () =>
      ask(sPort, async (r) => ((await r.call('SENTINEL', 'replicas', name)) as unknown[]).length > 0),
    );
    const primaryPort = async () =>
      Number(((await ask(sPort, (r) => r.call('SENTINEL', 'get-master-addr-by-name', name))) as string[])[1]);
    return {
      primary,
      replica,
      sentinel,
      name,
      sentinels: [`127.0.0.1:${sPort}`],
      primaryPort,
      failover: async () => {
        await primary.kill();
        await poll(
          'the Sentinel to promote the replica',
          async () =>
            (await primaryPort()) === rPort &&
            (await ask(rPort, async (r) => (await r.info('replication')).includes('role:master'))),
        );
      },
      stop: async () => {
        for (const s of started) await s.kill();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const s of started) await s.kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Whether this redis-server was built with TLS (Debian's is). */
export async function redisHasTls(): Promise<boolean> {
  const { stdout } = await run('ldd', [(await run('sh', ['-c', 'command -v redis-server'])).stdout.trim()]).catch(
    () => ({ stdout: '' }),
  );
  return /libssl/.test(stdout);
}

export interface TestTlsRedis {
  server: ServerProcess;
  port: number;
  /** the CA's PEM file, for `redis.tls.ca` */
  caFile: string;
  username: string;
  password: string;
  stop(): Promise<void>;
}

/**
 * A Redis that speaks TLS only (no plain port), with a certificate signed by a throwaway CA (for
 * 127.0.0.1), the default user off and one ACL user as docs/redis.md advises: keys under the test
 * prefixes (`fst*`) only, no @dangerous command but INFO and CONFIG GET.
 */
export async function startTlsRedis(): Promise<TestTlsRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'feedsync-tls-'));
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=feedsync test CA',
  );
  await ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await ssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '2',
    '-extfile',
    f('san.ext'),
  );
  const port = await freePort();
  const username = 'feedsync-app';
  const password = 'tls-acl-pass-7f3k2';
  writeFileSync(
    f('users.acl'),
    `user default off\nuser ${username} on >${password} ~fst* +@all -@dangerous +info +config|get\n`,
  );
  const server = await startServer(
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      f('server.pem'),
      '--tls-key-file',
      f('server.key'),
      '--tls-ca-cert-file',
      f('ca.pem'),
      '--tls-auth-clients',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--aclfile',
      f('users.acl'),
    ],
    dir,
    port,
  );
  return {
    server,
    port,
    caFile: f('ca.pem'),
    username,
    password,
    stop: async () => {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
