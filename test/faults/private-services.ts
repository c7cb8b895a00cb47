import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/apps.cjs';
import { freePorts, waitForPort } from '../../scripts/lib/net.cjs';
import { signalGroup, startProcess, tail, which, type ProcessHandle } from '../../scripts/lib/procs.cjs';
import { Pool } from 'pg';
import { capture, portClosed } from '../support/private-broker';
import { redisServerArgs } from '../support/redis-topologies';

/**
 * The fault matrix's own PostgreSQL, Redis and RabbitMQ (test/support/private-broker.ts): each on
 * its own free port with its own data under `.run/faults-<id>/`, so the matrix can stop and start
 * them without touching the servers on the default ports that every other test run (and engineer)
 * shares.
 */
export interface Dependency {
  readonly name: 'postgres' | 'redis' | 'rabbitmq';
  readonly url: string;
  /** Stops the server the way an operator does; every connection drops, the port closes. */
  stop(): Promise<void>;
  /** Starts it again on the same port with its data; resolves when it accepts connections. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

export function faultsDir(): string {
  const dir = path.join(
    ROOT,
    '.run',
    `faults-${process.env.TEST_RUN_ID ?? 'local'}-${randomBytes(3).toString('hex')}`,
  );
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: initdb + pg_ctl, for the matrix and the restore drill (clusters that archive their
// WAL to a folder, base backups with pg_basebackup, a restore of one plus archived WAL into a fresh
// data folder: docs/operations/restore-postgres.md, "Rehearsal"). root may not run postgres: then
// as the `postgres` system user, with its data in a folder of that user's under the system's temp
// folder, because the checkout may sit in a folder `postgres` cannot enter (root's home,
// `mktemp -d`), whose permissions are not ours to widen.

export function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base)
    ? fs
        .readdirSync(base)
        .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length)
    throw new Error('the fault matrix starts a private PostgreSQL: initdb is not installed');
  return path.join(base, versions[0], 'bin');
}

/** `cmd args` as the user who owns PostgreSQL's data: `postgres` when we are root. */
export function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

/** Runs a tool as asPostgres says, asynchronously (the load's clocks keep running). */
export function runTool(cmd: string, args: string[], cwd: string, timeoutMs: number) {
  const [file, argv] = asPostgres(cmd, args);
  return capture(file, argv, { cwd, timeoutMs });
}

/** A new folder owned by `postgres`; stops at once, saying why, when that user cannot use it. */
export function postgresOwnedDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-faults-postgres-'));
  spawnSync('chown', ['postgres:postgres', dir]);
  const probe = spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-w', dir], { stdio: 'ignore' });
  if (probe.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `the private PostgreSQL runs as the postgres user, who cannot write ${dir}: point TMPDIR at a folder it can enter (e.g. /tmp)`,
    );
  }
  return dir;
}

/**
 * A folder of PostgreSQL data folders (and, for the restore drill, a WAL archive and base backups)
 * named `name` under the run's folder; as root, under one of the `postgres` user's (postgresOwnedDir).
 */
export class PostgresWorkspace {
  private constructor(
    readonly dir: string,
    private readonly bin: string,
    /** The run's folder, where logs are kept when `dir` is elsewhere. */
    private readonly parent: string,
  ) {}

  static create(parent: string, name = 'pitr'): PostgresWorkspace {
    const dir = isRoot() ? postgresOwnedDir() : path.join(parent, name);
    fs.mkdirSync(dir, { recursive: true });
    return new PostgresWorkspace(dir, postgresBin(), parent);
  }

  path(...parts: string[]): string {
    return path.join(this.dir, ...parts);
  }

  /** A PostgreSQL tool by name (or `cp`, `mkdir`, ... as they are). */
  tool(name: string): string {
    return fs.existsSync(path.join(this.bin, name)) ? path.join(this.bin, name) : name;
  }

  /** Runs a tool as the user who owns the data. */
  async run(tool: string, args: string[], timeoutMs = 120_000): Promise<string> {
    const { status, output } = await runTool(this.tool(tool), args, this.dir, timeoutMs);
    if (status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${String(status)}):\n${output}`);
    return output;
  }

  /** Keeps the servers' logs in the run's folder and removes the data (it may hold nothing else). */
  destroy(): void {
    for (const name of fs.existsSync(this.dir) ? fs.readdirSync(this.dir) : []) {
      if (name.endsWith('.log')) fs.copyFileSync(this.path(name), path.join(this.parent, name));
    }
    if (this.dir.startsWith(this.parent + path.sep)) return;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One PostgreSQL server of a workspace: a data folder, its port, its log. */
export class PostgresCluster {
  private readonly pools = new Map<string, Pool>();
  private constructor(
    private readonly ws: PostgresWorkspace,
    readonly name: string,
    readonly port: number,
  ) {}

  get data(): string {
    return this.ws.path(this.name);
  }

  get logFile(): string {
    return this.ws.path(`${this.name}.log`);
  }

  /** initdb, with `settings` appended to postgresql.conf. */
  static async init(ws: PostgresWorkspace, name: string, settings: string[]): Promise<PostgresCluster> {
    const [port] = await freePorts(1);
    const cluster = new PostgresCluster(ws, name, port);
    await ws.run('initdb', ['-D', cluster.data, '-U', 'svc', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    cluster.configure([...baseSettings(port), ...settings]);
    return cluster;
  }

  /** A data folder made from a base backup: the cluster starts on a port of its own. */
  static async fromBackup(
    ws: PostgresWorkspace,
    name: string,
    backup: string,
    settings: string[],
  ): Promise<PostgresCluster> {
    const [port] = await freePorts(1);
    const cluster = new PostgresCluster(ws, name, port);
    await ws.run('cp', ['-a', backup, cluster.data]);
    await ws.run('chmod', ['0700', cluster.data]);
    cluster.configure([...baseSettings(port), ...settings]);
    return cluster;
  }

  /** Appends to postgresql.conf as the data's owner (the last setting of a name wins). */
  configure(lines: string[]): void {
    const file = path.join(this.data, 'postgresql.conf');
    fs.appendFileSync(file, ['', ...lines, ''].join('\n'));
  }

  /** Creates an empty file in the data folder (recovery.signal). */
  async touch(file: string): Promise<void> {
    await this.ws.run('touch', [path.join(this.data, file)]);
  }

  async start(): Promise<void> {
    try {
      await this.ws.run('pg_ctl', ['-D', this.data, '-l', this.logFile, '-w', '-t', '120', 'start'], 150_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${tail(this.logFile, 30)}`);
    }
    await waitForPort('127.0.0.1', this.port, 30_000, `PostgreSQL ${this.name}`);
  }

  /** `fast`: sessions are ended, the server shuts down cleanly. `immediate`: gone as in a crash. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.end().catch(() => undefined)));
    this.pools.clear();
    await this.ws
      .run('pg_ctl', ['-D', this.data, '-w', '-t', '60', '-m', mode, 'stop'], 90_000)
      .catch(() => '');
    await portClosed(this.port);
  }

  /** For a test process that dies without afterAll: blocks, so it works in an exit handler. */
  stopNow(): void {
    const [file, argv] = asPostgres(this.ws.tool('pg_ctl'), ['-D', this.data, '-m', 'immediate', 'stop']);
    spawnSync(file, argv, { cwd: this.ws.dir, timeout: 30_000, stdio: 'ignore' });
  }

  db(database = 'svc'): Pool {
    let pool = this.pools.get(database);
    if (!pool) {
      pool = new Pool({ host: '127.0.0.1', port: this.port, user: 'svc', database, max: 2 });
      this.pools.set(database, pool);
    }
    return pool;
  }

  log(): string {
    return fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : '';
  }
}

function baseSettings(port: number): string[] {
  return [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    // TCP only: a socket path under the data's folder could pass the 107-byte limit of its name.
    "unix_socket_directories = ''",
    'max_connections = 20',
    'shared_buffers = 32MB',
  ];
}

/** The matrix's PostgreSQL: one cluster that trades durability for speed, with a database `svc`. */
export class PrivatePostgres implements Dependency {
  readonly name = 'postgres' as const;
  private constructor(
    private readonly ws: PostgresWorkspace,
    private readonly cluster: PostgresCluster,
  ) {}

  get url(): string {
    return `postgres://svc:svc@127.0.0.1:${this.cluster.port}/svc`;
  }

  static async start(parent: string): Promise<PrivatePostgres> {
    const ws = PostgresWorkspace.create(parent, 'postgres');
    const cluster = await PostgresCluster.init(ws, 'postgres', [
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'max_connections = 200',
      'shared_buffers = 64MB',
    ]);
    await cluster.start();
    await ws.run('createdb', ['-h', '127.0.0.1', '-p', String(cluster.port), '-U', 'svc', 'svc'], 30_000);
    return new PrivatePostgres(ws, cluster);
  }

  start(): Promise<void> {
    return this.cluster.start();
  }

  stop(): Promise<void> {
    return this.cluster.stop('fast');
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    this.ws.destroy();
  }

  stopNow(): void {
    this.cluster.stopNow();
    this.ws.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Redis: redis-server in the foreground, no persistence (a restart loses the cache, as a crash would).

export class PrivateRedis implements Dependency {
  readonly name = 'redis' as const;
  private handle?: ProcessHandle;
  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(parent: string): Promise<PrivateRedis> {
    if (!which('redis-server'))
      throw new Error('the fault matrix starts a private Redis: redis-server is not installed');
    const dir = path.join(parent, 'redis');
    fs.mkdirSync(dir, { recursive: true });
    const [port] = await freePorts(1);
    const redis = new PrivateRedis(dir, port);
    await redis.start();
    return redis;
  }

  async start(): Promise<void> {
    this.handle = startProcess({
      name: 'redis',
      cmd: 'redis-server',
      args: redisServerArgs(this.port, this.dir),
      cwd: this.dir,
      logFile: path.join(this.dir, 'redis.log'),
    });
    await waitForPort('127.0.0.1', this.port, 20_000, 'private Redis');
  }

  /** SIGTERM: redis-server closes every connection and exits. */
  async stop(): Promise<void> {
    await this.handle?.stop(5000);
    await portClosed(this.port);
  }

  destroy(): Promise<void> {
    return this.stop();
  }

  stopNow(): void {
    if (this.handle?.alive() && this.handle.pid) signalGroup(this.handle.pid, 'SIGKILL');
  }
}
