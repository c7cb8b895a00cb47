import { loadConfig, REDIS_CONFIG, type RedisConfig } from '@svc/platform';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { redisCommands } from '../../scripts/lib/net.cjs';
import { eventually } from './services';

/**
 * Private Redis topologies for the integration tier: a three-primary Redis Cluster and a
 * Sentinel-managed primary with one replica and three sentinels, each on free ports of its own,
 * in a temp dir under `.run/`, with no persistence. The shared Redis on 6379 is never touched.
 * Every process started here is killed by `stop()` and, should a test run die first, on exit.
 *
 * Needs `redis-server` (Debian's package, which `npm test` installs when Redis is missing);
 * sentinels are `redis-server --sentinel`, so the `redis-sentinel` package is not needed.
 */
const ROOT = path.resolve(__dirname, '../..');
const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const HOST = '127.0.0.1';
export const SENTINEL_MASTER = 'mymaster';

export type TopologyName = 'single' | 'cluster' | 'sentinel';

export interface RedisTopology {
  readonly name: TopologyName;
  /** What an app reads: exactly one of REDIS_URL / REDIS_SENTINELS / REDIS_CLUSTER_NODES. */
  readonly env: Readonly<Record<string, string>>;
  /** The same as a validated config (loadConfig of REDIS_CONFIG). */
  readonly config: RedisConfig;
  stop(): Promise<void>;
}

export interface SentinelTopology extends RedisTopology {
  readonly name: 'sentinel';
  /** The port of the primary the sentinels name now. */
  primaryPort(): Promise<number>;
  /**
   * `SENTINEL FAILOVER`: the replica is promoted, the old primary becomes its replica. Resolves
   * once the sentinels name the new primary and it accepts writes.
   */
  failover(): Promise<{ from: number; to: number }>;
  /**
   * SIGKILL of the current primary, as a crashed pod: the sentinels must notice (1 s) and elect a
   * replica on their own. Resolves the killed port once the process is gone.
   */
  killPrimary(): Promise<number>;
  /** Resolves the new primary's port once every sentinel names one other than `from` and it takes writes. */
  elected(from: number, timeoutMs?: number): Promise<number>;
  /** Starts an empty server on a killed port as a replica of the current primary; resolves when in sync. */
  rejoin(port: number): Promise<void>;
  /** Resolves once every replica has acknowledged the primary's replication offset (no write in flight). */
  replicated(): Promise<void>;
  /** The ports of every Redis server (not the sentinels). */
  readonly serverPorts: readonly number[];
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Kills the servers listed in `<dir>/pids` and removes the dir once this process is gone: Jest
 * may end a worker without running exit handlers, and a leaked redis-server would hold its port.
 */
const WATCHDOG = String.raw`
const fs = require('node:fs');
const [parent, dir] = [Number(process.argv[1]), process.argv[2]];
setInterval(() => {
  try { process.kill(parent, 0); return; } catch {}
  let pids = [];
  try { pids = fs.readFileSync(dir + '/pids', 'utf8').split('\n').filter(Boolean).map(Number); } catch {}
  for (const pid of pids) { try { process.kill(pid, 'SIGKILL'); } catch {} }
  try { fs.rmSync(dir, { recursive: true, force: true }); } catch {}
  process.exit(0);
}, 500);
`;

interface RunDir {
  readonly dir: string;
  readonly children: ChildProcess[];
  start(args: string[]): ChildProcess;
  stop(): Promise<void>;
}

function runDir(kind: string): RunDir {
  assertInstalled();
  const base = path.join(ROOT, '.run');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(path.join(base, `redis-${kind}-`));
  const watchdog = spawn(process.execPath, ['-e', WATCHDOG, String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.unref();
  const children: ChildProcess[] = [];
  return {
    dir,
    children,
    start(args) {
      const child = startServer(dir, args);
      children.push(child);
      if (child.pid !== undefined) appendFileSync(path.join(dir, 'pids'), `${child.pid}\n`);
      return child;
    },
    async stop() {
      await Promise.all(children.map(killChild));
      rmSync(dir, { recursive: true, force: true });
      watchdog.kill('SIGKILL');
    },
  };
}

/** A port p with p and p + 10000 (a Cluster node's bus port) both free. */
async function freePort(taken: Set<number>): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, HOST, () => server.close(() => resolve(true)));
    });
  for (let i = 0; i < 200; i++) {
    const port = 30_000 + Math.floor(Math.random() * 10_000);
    if (taken.has(port)) continue;
    if ((await free(port)) && (await free(port + 10_000))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port pair for a private Redis');
}

function assertInstalled(): void {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    throw new Error(
      `${REDIS_SERVER} is not installed (apt-get install -y redis-server): ${probe.error?.message ?? probe.stderr}`,
    );
  }
}

function startServer(dir: string, args: string[]): ChildProcess {
  const child = spawn(REDIS_SERVER, args, { cwd: dir, stdio: 'ignore' });
  child.on('exit', () => live.delete(child));
  live.add(child);
  child.on('error', () => undefined); // reported by the PING that never answers
  return child;
}

/** A redis-server of its own: loopback, `port`, data in `dir`, no persistence, and `settings`. */
export function redisServerArgs(
  port: number,
  dir: string,
  settings: Record<string, string | readonly string[]> = {},
): string[] {
  const all = { port: String(port), bind: HOST, dir, save: '', appendonly: 'no', ...settings };
  // One argument per value as given: a folder may have spaces in its name (a checkout's path).
  return Object.entries(all).flatMap(([name, value]) => [`--${name}`, ...[value].flat()]);
}

/** Polls `check` until it yields a value; the error says what never happened. */
function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  return eventually(check, timeoutMs).catch((err: Error) => {
    throw new Error(`${what}: ${err.message}`);
  });
}

/** Resolves once the server on `port` answers PING. */
const answering = (port: number) =>
  until(`redis ${port} answers`, async () => ((await command(port, 'PING')) === 'PONG' ? true : undefined));

/** `env` with the config an app would read from it. */
function topology<N extends TopologyName>(name: N, env: Record<string, string>, stop: () => Promise<void>) {
  return { name, env, config: loadConfig(REDIS_CONFIG, env), stop };
}

/** One command to one server; a fresh connection each time, so a failover cannot confuse it. */
async function command(port: number, ...args: (string | number)[]): Promise<unknown> {
  const [reply] = await redisCommands(`redis://${HOST}:${port}`, [args]);
  return reply;
}

/** SIGKILL; resolves once the process is gone (at once if it is). */
function killChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGKILL); `start()` brings an empty one back on the same port. */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * One server of its own with a memory limit and an eviction policy, e.g. the state Redis
 * (`noeviction`) or the cache Redis (`allkeys-lru`) filled on purpose.
 */
export async function startPrivateRedis(options: {
  maxmemory: string;
  policy: string;
}): Promise<PrivateRedis> {
  const run = runDir('single');
  const port = await freePort(new Set());
  const args = redisServerArgs(port, run.dir, {
    maxmemory: options.maxmemory,
    'maxmemory-policy': options.policy,
  });
  let child: ChildProcess | undefined;
  const start = async () => {
    child = run.start(args);
    await answering(port);
  };
  await start();
  return {
    port,
    url: `redis://${HOST}:${port}`,
    start,
    kill: async () => {
      if (child) await killChild(child);
    },
    stop: () => run.stop(),
  };
}

/** Three primaries, no replicas, slots split evenly by `redis-cli --cluster create`. */
export async function startCluster(keyPrefix = ''): Promise<RedisTopology> {
  const run = runDir('cluster');
  const taken = new Set<number>();
  const ports = [await freePort(taken), await freePort(taken), await freePort(taken)];
  for (const port of ports)
    run.start(
      redisServerArgs(port, run.dir, {
        'cluster-enabled': 'yes',
        'cluster-config-file': `nodes-${port}.conf`,
        'cluster-node-timeout': '2000',
      }),
    );

  const cluster: RedisTopology = topology(
    'cluster',
    { REDIS_CLUSTER_NODES: ports.map((p) => `${HOST}:${p}`).join(','), REDIS_KEY_PREFIX: keyPrefix },
    () => run.stop(),
  );
  try {
    for (const port of ports) await answering(port);
    const created = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((p) => `${HOST}:${p}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );
    if (created.status !== 0)
      throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const port of ports) {
      await until(`cluster state ok on ${port}`, async () =>
        String(await command(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok') ? true : undefined,
      );
    }
    return cluster;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

function sentinelConf(port: number, primaryPort: number): string {
  return [
    `port ${port}`,
    `bind ${HOST}`,
    'protected-mode no',
    `sentinel monitor ${SENTINEL_MASTER} ${HOST} ${primaryPort} 2`,
    // Short, so the failover test takes seconds: subjectively down after 1 s without an answer.
    `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
    `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
    `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
    '',
  ].join('\n');
}

/**
 * A primary, one replica (or `replicas`) and three sentinels (quorum 2). With `sentinelsKnowEachOther`
 * it resolves only once every sentinel has found the two others, which an unforced failover needs.
 */
export async function startSentinel(
  keyPrefix = '',
  options: { replicas?: number; sentinelsKnowEachOther?: boolean } = {},
): Promise<SentinelTopology> {
  const run = runDir('sentinel');
  const { dir } = run;
  const taken = new Set<number>();
  const primary = await freePort(taken);
  const replicaPorts: number[] = [];
  for (let i = 0; i < (options.replicas ?? 1); i++) replicaPorts.push(await freePort(taken));
  const [replica] = replicaPorts;
  const serverPorts = [primary, ...replicaPorts];
  const sentinels = [await freePort(taken), await freePort(taken), await freePort(taken)];
  const processes = new Map<number, ChildProcess>();
  const server = (port: number, settings: Record<string, string | readonly string[]> = {}) =>
    processes.set(port, run.start(redisServerArgs(port, dir, settings)));
  server(primary);
  for (const port of replicaPorts) server(port, { replicaof: [HOST, String(primary)] });
  const inSync = (port: number) =>
    until(`the replica ${port} is in sync`, async () =>
      String(await command(port, 'INFO', 'replication')).includes('master_link_status:up') ? true : undefined,
    );

  const named = async (sentinel: number) =>
    Number(
      ((await command(sentinel, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER)) as string[])[1],
    );
  const askSentinels = async () => {
    for (const port of sentinels) {
      const primaryPort = await named(port).catch(() => undefined);
      if (primaryPort !== undefined) return primaryPort;
    }
    throw new Error('no sentinel answers');
  };
  const isPrimary = (port: number) =>
    until(`${port} is a primary`, async () =>
      String(await command(port, 'ROLE')).startsWith('master') ? true : undefined,
    );
  const set: SentinelTopology = {
    ...topology(
      'sentinel',
      {
        REDIS_SENTINELS: sentinels.map((p) => `${HOST}:${p}`).join(','),
        REDIS_SENTINEL_MASTER: SENTINEL_MASTER,
        REDIS_KEY_PREFIX: keyPrefix,
      },
      () => run.stop(),
    ),
    primaryPort: askSentinels,
    serverPorts,
    async killPrimary() {
      const port = await askSentinels();
      const child = processes.get(port);
      if (!child || child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the primary ${port} is not one of ours or is gone`);
      await killChild(child);
      return port;
    },
    async elected(from, timeoutMs = 30_000) {
      let to = 0;
      for (const port of sentinels) {
        to = await until(
          `sentinel ${port} names a primary other than ${from}`,
          async () => {
            const current = await named(port);
            return current === from ? undefined : current;
          },
          timeoutMs,
        );
      }
      await isPrimary(to);
      return to;
    },
    async rejoin(port) {
      const current = await askSentinels();
      server(port, { replicaof: [HOST, String(current)] });
      await inSync(port);
    },
    async replicated() {
      // The offset of now, then each replica's acknowledgement of it (sent every second); under
      // load the primary's offset moves on meanwhile, which only later writes account for.
      const primaryNow = await askSentinels();
      const offsetOf = (info: string) => Number(/master_repl_offset:(\d+)/.exec(info)?.[1]);
      const target = offsetOf(String(await command(primaryNow, 'INFO', 'replication')));
      await until(`every replica has acknowledged offset ${target}`, async () => {
        const info = String(await command(primaryNow, 'INFO', 'replication'));
        const acks = [...info.matchAll(/slave\d+:.*?offset=(\d+)/g)].map((m) => Number(m[1]));
        return acks.length > 0 && acks.every((a) => a >= target) ? true : undefined;
      });
    },
    async failover() {
      const from = await askSentinels();
      const to = from === primary ? replica : primary;
      await inSync(to);
      await command(sentinels[0], 'SENTINEL', 'FAILOVER', SENTINEL_MASTER);
      for (const port of sentinels)
        await until(`sentinel ${port} names ${to}`, async () =>
          (await named(port)) === to ? true : undefined,
        );
      await isPrimary(to);
      return { from, to };
    },
  };
  try {
    for (const port of serverPorts) await answering(port);
    for (const port of replicaPorts) await inSync(port);
    for (const port of sentinels) {
      const conf = path.join(dir, `sentinel-${port}.conf`);
      writeFileSync(conf, sentinelConf(port, primary));
      run.start([conf, '--sentinel']);
    }
    // Each sentinel knows the replica, so a forced failover (SENTINEL FAILOVER) can promote it;
    // the sentinels find each other within seconds after that, which only an unforced one needs.
    for (const port of sentinels) {
      await until(`sentinel ${port} sees the replica`, async () => {
        const info = String(await command(port, 'INFO', 'sentinel'));
        return new RegExp(`slaves=${replicaPorts.length},`).test(info) ? true : undefined;
      });
      if (options.sentinelsKnowEachOther) {
        await until(
          `sentinel ${port} knows the two others`,
          async () =>
            /sentinels=3\b/.test(String(await command(port, 'INFO', 'sentinel'))) ? true : undefined,
          30_000,
        );
      }
    }
    return set;
  } catch (err) {
    await set.stop();
    throw err;
  }
}

export const TOPOLOGY_NAMES: readonly TopologyName[] = ['single', 'cluster', 'sentinel'];

export interface Topologies {
  readonly single: RedisTopology;
  readonly cluster: RedisTopology;
  readonly sentinel: SentinelTopology;
  stop(): Promise<void>;
}

/**
 * The run's shared server plus a private Cluster and Sentinel set, started side by side, for a
 * spec that runs one body against all three (`describe.each(TOPOLOGY_NAMES)`).
 */
export async function startTopologies(redisUrl: string, keyPrefix: string): Promise<Topologies> {
  const [cluster, sentinel] = await Promise.allSettled([startCluster(keyPrefix), startSentinel(keyPrefix)]);
  const started = [cluster, sentinel].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stop = async () => {
    await Promise.all(started.map((t) => t.stop()));
  };
  if (cluster.status === 'rejected' || sentinel.status === 'rejected') {
    await stop();
    throw cluster.status === 'rejected' ? cluster.reason : (sentinel as PromiseRejectedResult).reason;
  }
  return {
    // The shared server of this run (`npm test`'s REDIS_URL): nothing to start or stop.
    single: topology('single', { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: keyPrefix }, () => Promise.resolve()),
    cluster: cluster.value,
    sentinel: sentinel.value,
    stop,
  };
}
