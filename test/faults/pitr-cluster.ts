import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { freePorts, waitForPort } from '../../scripts/lib/net.cjs';
import { tail } from '../../scripts/lib/procs.cjs';
import { isRoot, postgresBin, postgresOwnedDir, runTool } from './private-services';

/**
 * What the restore drill runs: PostgreSQL clusters of its own (initdb, pg_ctl) that archive their
 * WAL to a folder, base backups with pg_basebackup, and a restore of a backup plus archived WAL
 * into a fresh data folder (docs/operations/restore-postgres.md, "Rehearsal"). As root the tools
 * run as the `postgres` user, with every folder under one of that user's (see postgresOwnedDir).
 */
export class PitrWorkspace {
  private constructor(
    /** Data folders, the WAL archive and the base backups live here. */
    readonly dir: string,
    private readonly bin: string,
    /** The run's folder, where logs are kept when `dir` is elsewhere. */
    private readonly parent: string,
  ) {}

  static create(parent: string): PitrWorkspace {
    const dir = isRoot() ? postgresOwnedDir() : path.join(parent, 'pitr');
    fs.mkdirSync(dir, { recursive: true });
    return new PitrWorkspace(dir, postgresBin(), parent);
  }

  path(...parts: string[]): string {
    return path.join(this.dir, ...parts);
  }

  /** Runs a PostgreSQL tool (or `cp`, `mkdir`) as the user who owns the data. */
  async run(tool: string, args: string[], timeoutMs = 120_000): Promise<string> {
    const cmd = fs.existsSync(path.join(this.bin, tool)) ? path.join(this.bin, tool) : tool;
    const { status, output } = await runTool(cmd, args, this.dir, timeoutMs);
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

/** One cluster of the drill: a data folder, its port, its log. */
export class PitrCluster {
  private readonly pools = new Map<string, Pool>();
  private constructor(
    private readonly ws: PitrWorkspace,
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
  static async init(ws: PitrWorkspace, name: string, settings: string[]): Promise<PitrCluster> {
    const [port] = await freePorts(1);
    const cluster = new PitrCluster(ws, name, port);
    await ws.run('initdb', ['-D', cluster.data, '-U', 'svc', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    cluster.configure([...baseSettings(port), ...settings]);
    return cluster;
  }

  /** A data folder made from a base backup: the cluster starts on a port of its own. */
  static async fromBackup(
    ws: PitrWorkspace,
    name: string,
    backup: string,
    settings: string[],
  ): Promise<PitrCluster> {
    const [port] = await freePorts(1);
    const cluster = new PitrCluster(ws, name, port);
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

  /** `immediate`: the server is gone as in a crash; nothing more reaches the archive. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.end().catch(() => undefined)));
    this.pools.clear();
    await this.ws
      .run('pg_ctl', ['-D', this.data, '-w', '-t', '60', '-m', mode, 'stop'], 90_000)
      .catch(() => '');
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
