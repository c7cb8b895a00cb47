import Redis from 'ioredis';
import type { RedisClient } from './redis-client';

/**
 * The server a Redis client talks to (`INFO server` run_id): after a failover or restart, what the
 * old server said (e.g. not revoked) must not be trusted against the new one. Undefined between a
 * close and the new run_id. A Cluster is a constant (failovers inside it: docs/security.md).
 */
export class RedisServerIdentity {
  private runId: string | undefined;
  private connection = 0;
  private readonly listeners: ((runId: string, previous: string) => void)[] = [];

  private constructor(private readonly client: RedisClient) {}

  static watch(client: RedisClient): RedisServerIdentity {
    const identity = new RedisServerIdentity(client);
    if (!(client instanceof Redis)) {
      identity.runId = 'cluster';
      return identity;
    }
    client.on('close', () => {
      identity.connection += 1;
      identity.runId = undefined;
    });
    client.on('ready', () => void identity.read());
    if (client.status === 'ready') void identity.read();
    return identity;
  }

  /** The run_id of the server the client talks to now; undefined while that is not known. */
  get current(): string | undefined {
    return this.runId;
  }

  /** Called once per change of server after the first one was known (not on the first read). */
  onChange(listener: (runId: string, previous: string) => void): void {
    this.listeners.push(listener);
  }

  private async read(): Promise<void> {
    const connection = this.connection;
    let info: string;
    try {
      info = await (this.client as Redis).info('server');
    } catch {
      return; // the next 'ready' reads it again; until then nothing is trusted
    }
    const runId = /^run_id:([0-9a-f]+)\r?$/m.exec(info)?.[1];
    // A close since the question was asked: the answer may be the old server's.
    if (!runId || connection !== this.connection) return;
    const previous = this.known;
    this.runId = runId;
    this.known = runId;
    if (previous !== undefined && previous !== runId)
      for (const listener of this.listeners) listener(runId, previous);
  }

  /** The last run_id read, kept across a reconnection, to tell a new server from the same one. */
  private known: string | undefined;
}
