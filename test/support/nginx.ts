import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../apps/gateway/src/generate';
import { nginxArgs } from '../../scripts/lib/apps.cjs';
import { freePort, waitForHttpOk } from '../../scripts/lib/net.cjs';

/** The nginx the gateway's tests run: NGINX_BIN, else Debian's /usr/sbin/nginx, else `nginx` on PATH. */
export function nginxBinary(): string {
  if (process.env.NGINX_BIN) return process.env.NGINX_BIN;
  return existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
}

export interface Gateway {
  readonly base: string;
  readonly port: number;
  readonly dir: string;
  accessLog(): string;
  stop(): Promise<void>;
}

/**
 * The gateway as the integration specs run it: the generator's output under a real nginx on a
 * free loopback port, started again on another port when one was taken meanwhile.
 */
export async function startGateway(env: Record<string, string>): Promise<Gateway> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-it-'));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const errors: string[] = [];
    const code = await main(
      ['--out', dir],
      { ...env, GATEWAY_PORT: String(port), GATEWAY_LISTEN_HOST: '127.0.0.1' },
      { stdout: () => undefined, stderr: (line) => errors.push(line) },
    );
    if (code !== 0) throw new Error(`generator exited ${code}: ${errors.join('\n')}`);

    // nginx opens /dev/stdout for the access log, which fails on a socket (a Node 'pipe'): a file.
    const logFd = openSync(join(dir, 'access.log'), 'a');
    const child = spawn(nginxBinary(), nginxArgs(dir), {
      detached: true,
      stdio: ['ignore', logFd, 'pipe'],
    });
    closeSync(logFd);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

    const base = `http://127.0.0.1:${port}`;
    const isAlive = () => child.exitCode === null && child.signalCode === null;
    const ready = await waitForHttpOk(`${base}/healthz`, { timeoutMs: 10_000, isAlive }).then(
      () => true,
      () => false,
    );
    if (ready) {
      return {
        base,
        port,
        dir,
        accessLog: () => readFileSync(join(dir, 'access.log'), 'utf8'),
        stop: async () => {
          await stopNginx(child, exited);
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    await stopNginx(child, exited);
    if (!stderr.includes('Address already in use') || attempt >= 3) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start:\n${stderr}`);
    }
  }
}

/** SIGTERM to the master (it stops its workers); SIGKILL to its process group if it hangs. */
async function stopNginx(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 5000).unref());
  if ((await Promise.race([exited, timeout])) === 'timeout' && child.pid) {
    process.kill(-child.pid, 'SIGKILL');
    await exited;
  }
}
