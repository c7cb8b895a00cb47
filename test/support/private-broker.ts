import { connect as amqpConnect } from 'amqplib';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/apps.cjs';
import { APPS, amqpPassword, amqpUser, topicPermissions } from '../../scripts/lib/credentials.cjs';
import { freePorts, sleep, tcpReachable, waitForPort } from '../../scripts/lib/net.cjs';
import { signalGroup, startProcess, tail, type ProcessHandle } from '../../scripts/lib/procs.cjs';
import { eventually } from './services';

// RabbitMQ's own scripts (the /usr/sbin wrappers switch to the rabbitmq user and its cookie).
const RABBIT_BIN = '/usr/lib/rabbitmq/bin';

/**
 * Runs a command asynchronously (a caller's clocks and sockets keep running), killed after
 * `timeoutMs`: its exit status (null: killed or not started) and its output, stdout then stderr.
 */
export async function capture(
  cmd: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ status: number | null; output: string }> {
  const child = spawn(cmd, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const status = await new Promise<number | null>((resolve) => {
    child.once('exit', resolve);
    child.once('error', (e) => {
      err += e.message;
      resolve(null);
    });
  });
  clearTimeout(timer);
  return { status, output: out + err };
}

/** Resolves once nothing listens on `port` any more (or after 5 s). */
export async function portClosed(port: number): Promise<void> {
  for (let i = 0; i < 50 && (await tcpReachable('127.0.0.1', port, 200)); i++) await sleep(100);
}

/**
 * A RabbitMQ node of one test's own (own node name, ports, data directory and Erlang cookie), so
 * the test can stop and start its broker without touching the one every other test run shares.
 * Its data (durable quorum queues, their messages) survives a restart. Every command is
 * asynchronous: a test that measures latency while the broker goes away must not stall its own
 * clocks and sockets on a synchronous `rabbitmqctl` (seconds of Erlang start-up).
 */
export class PrivateBroker {
  readonly name = 'rabbitmq' as const;
  private handle?: ProcessHandle;

  private constructor(
    private readonly dir: string,
    private readonly node: string,
    readonly port: number,
    private readonly distPort: number,
  ) {}

  /** amqp URL of the node's default vhost. */
  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}/`;
  }

  get logFile(): string {
    return path.join(this.dir, 'rabbitmq.log');
  }

  /**
   * A cluster of `size` nodes (one Erlang cookie, ports of their own): every node boots alone,
   * then each but the first joins the first (`rabbitmqctl stop_app; join_cluster; start_app`).
   * Quorum queues declared afterwards get a member on every node.
   */
  static async startCluster(label: string, parentDir: string, size = 3): Promise<PrivateBroker[]> {
    const cookie = randomBytes(20).toString('hex');
    const nodes = await Promise.all(
      Array.from({ length: size }, (_, i) => PrivateBroker.start(`${label}${i + 1}`, parentDir, cookie)),
    );
    try {
      const [first, ...others] = nodes;
      for (const node of others) {
        await node.ctl(['stop_app']);
        await node.ctl(['join_cluster', first.node]);
        await node.ctl(['start_app']);
        await node.waitUntilAnswering();
      }
      const status = await first.ctl(['cluster_status', '--formatter', 'json']);
      const running = (JSON.parse(status) as { running_nodes?: string[] }).running_nodes ?? [];
      if (running.length !== size) throw new Error(`the cluster runs ${running.join(', ')} only`);
      return nodes;
    } catch (err) {
      await Promise.all(nodes.map((n) => n.destroy()));
      throw err;
    }
  }

  /** `rabbitmqctl -n <node> ...` with the node's cookie, asynchronously (an Erlang VM of its own: seconds). */
  async ctl(args: string[], timeoutMs = 180_000): Promise<string> {
    const rabbitmqctl = path.join(RABBIT_BIN, 'rabbitmqctl');
    const { status, output } = await capture(rabbitmqctl, ['-n', this.node, ...args], {
      cwd: this.dir,
      env: this.env(),
      timeoutMs,
    });
    if (status !== 0) throw new Error(`rabbitmqctl ${args.join(' ')} failed (${String(status)}): ${output}`);
    return output;
  }

  /** Starts a node whose data lives under `parentDir` (default: this test run's folder). */
  static async start(label: string, parentDir?: string, cookie?: string): Promise<PrivateBroker> {
    if (!fs.existsSync(path.join(RABBIT_BIN, 'rabbitmq-server'))) {
      throw new Error(
        `this test starts a private RabbitMQ node: rabbitmq-server is not installed (${RABBIT_BIN})`,
      );
    }
    const id = randomBytes(4).toString('hex');
    const parent = parentDir ?? path.join(ROOT, '.run', `integration-${process.env.TEST_RUN_ID ?? 'local'}`);
    const dir = path.join(parent, `rabbitmq-${label}-${id}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'enabled_plugins'), '[].\n');
    fs.writeFileSync(path.join(dir, '.erlang.cookie'), cookie ?? randomBytes(20).toString('hex'), {
      mode: 0o400,
    });
    const [port, distPort] = await freePorts(2);
    const broker = new PrivateBroker(dir, `svc-test-${label}-${id}@localhost`, port, distPort);
    await broker.boot();
    await broker.addAppUsers();
    return broker;
  }

  /**
   * Every app's own user (svc-<app>, its sandbox password, permissions and topic permissions,
   * scripts/lib/credentials.cjs) on the default vhost, as `npm test` gives the shared broker: the RPC servers answer each app on
   * its own user only. One `import_definitions` (each rabbitmqctl is an Erlang VM of its own).
   */
  private async addAppUsers(): Promise<void> {
    const hash = (password: string) => {
      // RabbitMQ's rabbit_password_hashing_sha256: base64(salt ++ sha256(salt ++ password)).
      const salt = randomBytes(4);
      const digest = createHash('sha256')
        .update(Buffer.concat([salt, Buffer.from(password)]))
        .digest();
      return Buffer.concat([salt, digest]).toString('base64');
    };
    const apps = Object.keys(APPS);
    const definitions = {
      users: apps.map((app) => ({
        name: amqpUser(app),
        password_hash: hash(amqpPassword(app)),
        hashing_algorithm: 'rabbit_password_hashing_sha256',
        tags: [],
      })),
      permissions: apps.map((app) => ({ user: amqpUser(app), vhost: '/', ...APPS[app].amqp })),
      topic_permissions: apps.flatMap((app) =>
        topicPermissions(app).map((t) => ({ user: amqpUser(app), vhost: '/', ...t })),
      ),
    };
    const file = path.join(this.dir, 'app-users.json');
    fs.writeFileSync(file, JSON.stringify(definitions));
    await this.ctl(['import_definitions', file]);
  }

  /**
   * SIGTERM to the node, as a service manager stops it: RabbitMQ shuts down cleanly and every
   * connection drops (`rabbitmqctl shutdown` does the same, after booting an Erlang VM of its own:
   * tens of seconds on a busy 2-core machine).
   */
  async stop(): Promise<void> {
    await this.handle?.stop(30_000);
    await portClosed(this.port);
  }

  /** Starts the stopped node again, on the same ports, with its data. */
  start(): Promise<void> {
    return this.boot();
  }

  /** Kills the node at once (a test's last resort when it fails half-way). */
  stopNow(): void {
    if (this.handle?.alive() && this.handle.pid) signalGroup(this.handle.pid, 'SIGKILL');
  }

  /** Stops the node and removes its folder; FAULTS_KEEP=1 keeps the logs (a drill that failed is read from them). */
  async destroy(): Promise<void> {
    await this.stop().catch(() => this.handle?.stop(2000));
    if (!process.env.FAULTS_KEEP) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private env(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH ?? '',
      HOME: this.dir,
      RABBITMQ_NODENAME: this.node,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(this.port),
      RABBITMQ_DIST_PORT: String(this.distPort),
      RABBITMQ_MNESIA_BASE: path.join(this.dir, 'mnesia'),
      RABBITMQ_LOG_BASE: path.join(this.dir, 'log'),
      RABBITMQ_ENABLED_PLUGINS_FILE: path.join(this.dir, 'enabled_plugins'),
      RABBITMQ_CONFIG_FILE: path.join(this.dir, 'rabbitmq'),
      RABBITMQ_ADVANCED_CONFIG_FILE: path.join(this.dir, 'advanced.config'),
      RABBITMQ_PID_FILE: path.join(this.dir, 'rabbitmq.pid'),
    };
  }

  private async boot(): Promise<void> {
    const handle = startProcess({
      name: 'rabbitmq',
      cmd: path.join(RABBIT_BIN, 'rabbitmq-server'),
      env: this.env(),
      cwd: this.dir,
      logFile: this.logFile,
    });
    this.handle = handle;
    try {
      await waitForPort('127.0.0.1', this.port, 60_000, `private RabbitMQ ${this.node}`);
      await this.waitUntilAnswering();
    } catch (err) {
      await handle.stop(2000);
      throw new Error(`${(err as Error).message}\n${tail(this.logFile, 30)}`);
    }
  }

  /** The AMQP port opens a moment before the node accepts logins; wait for a real connection. */
  async waitUntilAnswering(): Promise<void> {
    const connects = async () => {
      await (await amqpConnect(this.url)).close();
      return true;
    };
    await eventually(connects, 60_000, 200).catch((err: Error) => {
      throw new Error(`private RabbitMQ does not accept connections: ${err.message}`);
    });
  }
}
