import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../../scripts/lib/apps.cjs';
import { freePorts, tcpReachable, waitForPort } from '../../../scripts/lib/net.cjs';
import { startProcess, tail, type ProcessHandle } from '../../../scripts/lib/procs.cjs';

// RabbitMQ's own scripts (the /usr/sbin wrappers switch to the rabbitmq user and its cookie).
const RABBIT_BIN = '/usr/lib/rabbitmq/bin';

/**
 * A RabbitMQ node of one test's own (own node name, ports, data directory and Erlang cookie), so
 * the test can stop and start its broker without touching the one every other test run shares.
 * Measured here: ~3 s to start, ~1.5 s to shut down; its data (durable quorum queues, their
 * messages) survives a restart.
 */
export class PrivateBroker {
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

  static async start(label: string): Promise<PrivateBroker> {
    if (!fs.existsSync(path.join(RABBIT_BIN, 'rabbitmq-server'))) {
      throw new Error(
        `this test starts a private RabbitMQ node: rabbitmq-server is not installed (${RABBIT_BIN})`,
      );
    }
    const id = randomBytes(4).toString('hex');
    const runDir = path.join(ROOT, '.run', `integration-${process.env.TEST_RUN_ID ?? 'local'}`);
    const dir = path.join(runDir, `rabbitmq-${label}-${id}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'enabled_plugins'), '[].\n');
    fs.writeFileSync(path.join(dir, '.erlang.cookie'), randomBytes(20).toString('hex'), { mode: 0o400 });
    const [port, distPort] = await freePorts(2);
    const broker = new PrivateBroker(dir, `svc-test-${label}-${id}@localhost`, port, distPort);
    await broker.boot();
    return broker;
  }

  /** Stops the node the way an operator does (`rabbitmqctl shutdown`); every connection drops. */
  async stop(): Promise<void> {
    const handle = this.handle;
    if (!handle?.alive()) return;
    const res = spawnSync(path.join(RABBIT_BIN, 'rabbitmqctl'), ['-n', this.node, 'shutdown'], {
      env: this.env(),
      cwd: this.dir,
      timeout: 30_000,
      stdio: 'ignore',
    });
    if (res.status !== 0) await handle.stop(5000);
    else await handle.exited;
    for (let i = 0; i < 50 && (await tcpReachable('127.0.0.1', this.port, 200)); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Starts the stopped node again, on the same ports, with its data. */
  async restart(): Promise<void> {
    await this.boot();
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => this.handle?.stop(2000));
    fs.rmSync(this.dir, { recursive: true, force: true });
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
      await waitForPort('127.0.0.1', this.port, 30_000, `private RabbitMQ ${this.node}`);
    } catch (err) {
      await handle.stop(2000);
      throw new Error(`${(err as Error).message}\n${tail(this.logFile, 30)}`);
    }
  }
}
