import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/apps.cjs';
import { freePorts, tcpReachable, waitForPort } from '../../scripts/lib/net.cjs';
import { startProcess, tail, which, type ProcessHandle } from '../../scripts/lib/procs.cjs';
import { PrivateBroker } from '../support/private-broker';

/**
 * The fault matrix's own PostgreSQL, Redis and RabbitMQ: each on its own free port with its own
 * data under `.run/faults-<id>/`, so the matrix can stop and start them without touching the
 * servers on the default ports that every other test run (and engineer) shares.
 */
export interface Dependency {
  readonly name: 'postgres' | 'redis' | 'rabbitmq';
  readonly url: string;
  readonly logFile: string;
  /** Stops the server the way an operator does; every connection drops, the port closes. */
  stop(): Promise<void>;
  /** Starts it again on the same port with its data; resolves when it accepts connections. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
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
// PostgreSQL: initdb + pg_ctl. root may not run postgres: then as the `postgres` system user, with
// its data in a folder of that user's under the system's temp folder, because the checkout may sit
// in a folder `postgres` cannot enter (root's home, `mktemp -d`), whose permissions are not ours to widen.

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

/**
 * Runs a tool as asPostgres says, asynchronously (the load's clocks keep running), killed after
 * `timeoutMs`: its exit status (null: killed or not started) and its output.
 */
export async function runTool(cmd: string, args: string[], cwd: string, timeoutMs: number) {
  const [file, argv] = asPostgres(cmd, args);
  let output = '';
  const status = await new Promise<number | null>((resolve) => {
    const child = spawn(file, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.once('error', (err) => {
      output += err.message;
      resolve(null);
    });
  });
  return { status, output };
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

export class PrivatePostgres implements Dependency {
  readonly name = 'postgres' as const;
  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    /** The run's folder, where the server log is kept when the data lives elsewhere. */
    private readonly parent: string,
  ) {}

  get url(): string {
    return `postgres://svc:svc@127.0.0.1:${this.port}/svc`;
  }

  get logFile(): string {
    return path.join(this.dir, 'postgres.log');
  }

  private get data(): string {
    return path.join(this.dir, 'data');
  }

  static async start(parent: string): Promise<PrivatePostgres> {
    const bin = postgresBin();
    const dir = isRoot() ? postgresOwnedDir() : path.join(parent, 'postgres');
    fs.mkdirSync(dir, { recursive: true });
    const [port] = await freePorts(1);
    const pg = new PrivatePostgres(dir, port, bin, parent);
    pg.runSync('initdb', ['-D', pg.data, '-U', 'svc', '--auth=trust', '-E', 'UTF8', '--no-sync'], 120_000);
    fs.appendFileSync(
      path.join(pg.data, 'postgresql.conf'),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        // TCP only: a socket path under the run's folder could pass the 107-byte limit of its name.
        "unix_socket_directories = ''",
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        'max_connections = 200',
        'shared_buffers = 64MB',
        '',
      ].join('\n'),
    );
    await pg.start();
    await pg.run('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'svc', 'svc'], 30_000);
    return pg;
  }

  async start(): Promise<void> {
    await this.run('pg_ctl', ['-D', this.data, '-l', this.logFile, '-w', '-t', '60', 'start'], 90_000);
    await waitForPort('127.0.0.1', this.port, 30_000, 'private PostgreSQL');
  }

  /** `pg_ctl stop -m fast`: sessions are ended, the server shuts down cleanly. */
  async stop(): Promise<void> {
    await this.run('pg_ctl', ['-D', this.data, '-w', '-t', '60', '-m', 'fast', 'stop'], 90_000, true);
    for (let i = 0; i < 50 && (await tcpReachable('127.0.0.1', this.port, 200)); i++) await sleep(100);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    this.removeOutsideData();
  }

  /** Data kept outside the run's folder (see postgresOwnedDir) goes with the server; its log is kept. */
  private removeOutsideData(): void {
    if (this.dir.startsWith(this.parent + path.sep)) return;
    if (fs.existsSync(this.logFile)) fs.copyFileSync(this.logFile, path.join(this.parent, 'postgres.log'));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** For a test process that dies without afterAll. */
  stopNow(): void {
    this.runSync('pg_ctl', ['-D', this.data, '-m', 'immediate', 'stop'], 30_000, true);
    this.removeOutsideData();
  }

  private argv(tool: string, args: string[]): [string, string[]] {
    return asPostgres(path.join(this.bin, tool), args);
  }

  private fail(tool: string, args: string[], status: unknown, output: string): never {
    throw new Error(
      `${tool} ${args.join(' ')} failed (${String(status)}):\n${output}\n${tail(this.logFile, 20)}`,
    );
  }

  /** For set-up and emergencies only: blocks the event loop, and with it the load's clocks. */
  private runSync(tool: string, args: string[], timeout: number, tolerant = false): void {
    const [file, argv] = this.argv(tool, args);
    const res = spawnSync(file, argv, {
      cwd: this.dir,
      timeout,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (res.status !== 0 && !tolerant)
      this.fail(tool, args, res.status ?? res.signal, `${res.stdout}${res.stderr}`);
  }

  private async run(tool: string, args: string[], timeout: number, tolerant = false): Promise<void> {
    const { status, output } = await runTool(path.join(this.bin, tool), args, this.dir, timeout);
    if (status !== 0 && !tolerant) this.fail(tool, args, status, output);
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

  get logFile(): string {
    return path.join(this.dir, 'redis.log');
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
      args: [
        '--bind',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
      ],
      cwd: this.dir,
      logFile: this.logFile,
    });
    await waitForPort('127.0.0.1', this.port, 20_000, 'private Redis');
  }

  /** SIGTERM: redis-server closes every connection and exits. */
  async stop(): Promise<void> {
    await this.handle?.stop(5000);
    for (let i = 0; i < 50 && (await tcpReachable('127.0.0.1', this.port, 200)); i++) await sleep(100);
  }

  async destroy(): Promise<void> {
    await this.stop();
  }

  stopNow(): void {
    if (this.handle?.alive() && this.handle.pid) {
      try {
        process.kill(-this.handle.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// RabbitMQ: the same private node the broker-restart spec uses, as one of the matrix's dependencies.

export class PrivateRabbit implements Dependency {
  readonly name = 'rabbitmq' as const;

  private constructor(private readonly broker: PrivateBroker) {}

  static async start(parent: string): Promise<PrivateRabbit> {
    return new PrivateRabbit(await PrivateBroker.start('faults', parent));
  }

  get url(): string {
    return this.broker.url;
  }

  get logFile(): string {
    return this.broker.logFile;
  }

  start(): Promise<void> {
    return this.broker.restart();
  }

  stop(): Promise<void> {
    return this.broker.stop();
  }

  async destroy(): Promise<void> {
    await this.broker.stop().catch(() => this.broker.stopNow());
  }

  stopNow(): void {
    this.broker.stopNow();
  }
}
