import type { NestAppName, RpcContract } from '@svc/contracts';
import { AmqpConnection, createLogger, RpcClient } from '@svc/platform';
import { appBrokerUrl } from '../../scripts/lib/credentials.cjs';

/** A connection per app, on that app's own broker user, opened at its first use. */
export class AppConnections {
  private readonly connections = new Map<NestAppName, AmqpConnection>();

  constructor(
    private readonly amqpUrl: string,
    private readonly name: string,
    private readonly prefetch = 1,
  ) {}

  of(app: NestAppName): AmqpConnection {
    let connection = this.connections.get(app);
    if (!connection) {
      connection = new AmqpConnection(
        { url: appBrokerUrl(app, this.amqpUrl), name: `${this.name}-${app}`, prefetch: this.prefetch },
        createLogger(this.name, 'silent'),
      );
      connection.start();
      this.connections.set(app, connection);
    }
    return connection;
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    this.connections.clear();
  }
}

/**
 * The tests' side of RPC: each contract is asked as the first app its contract names, on that
 * app's own broker user (AppConnections), the way that app asks.
 */
export class CallerRpc {
  private readonly connections: AppConnections;
  private readonly clients = new Map<NestAppName, RpcClient>();

  constructor(
    amqpUrl: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.connections = new AppConnections(amqpUrl, 'test-as', 20);
  }

  call<Req, Res>(contract: RpcContract<Req, Res>, payload: Req, timeoutMs?: number): Promise<Res> {
    return this.as(contract.callers[0]).call(contract, payload, timeoutMs);
  }

  /** The RPC client of `app`, on its own broker user. */
  as(app: NestAppName): RpcClient {
    let client = this.clients.get(app);
    if (!client) {
      client = new RpcClient(this.connections.of(app), { RPC_TIMEOUT_MS: this.timeoutMs });
      this.clients.set(app, client);
    }
    return client;
  }

  close(): Promise<void> {
    this.clients.clear();
    return this.connections.close();
  }
}
