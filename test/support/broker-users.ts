import type { NestAppName, RpcContract } from '@svc/contracts';
import { AmqpConnection, createLogger, RpcClient } from '@svc/platform';
import { appBrokerUrl } from '../../scripts/lib/credentials.cjs';

/**
 * `amqpUrl` (this run's vhost, or a file's own) with `app`'s own broker user, as `npm start` and
 * the e2e system connect each app: RPC servers answer an app only when it asks as its own user.
 */
export function brokerUrlOf(app: NestAppName, amqpUrl: string): string {
  return appBrokerUrl(app, amqpUrl);
}

/**
 * The tests' side of RPC: each contract is asked as the first app its contract names, on that
 * app's own broker user (a connection per app, opened at its first call), the way that app asks.
 */
export class CallerRpc {
  private readonly clients = new Map<NestAppName, { amqp: AmqpConnection; rpc: RpcClient }>();

  constructor(
    private readonly amqpUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  call<Req, Res>(contract: RpcContract<Req, Res>, payload: Req, timeoutMs?: number): Promise<Res> {
    return this.as(contract.callers[0]).call(contract, payload, timeoutMs);
  }

  /** The RPC client of `app`, on its own broker user. */
  as(app: NestAppName): RpcClient {
    let client = this.clients.get(app);
    if (!client) {
      const amqp = new AmqpConnection(
        { url: brokerUrlOf(app, this.amqpUrl), name: `test-as-${app}`, prefetch: 20 },
        createLogger('rpc-test', 'silent'),
      );
      amqp.start();
      client = { amqp, rpc: new RpcClient(amqp, { RPC_TIMEOUT_MS: this.timeoutMs }) };
      this.clients.set(app, client);
    }
    return client.rpc;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.amqp.close()));
    this.clients.clear();
  }
}
