import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ClientRMQ, RmqRecordBuilder } from '@nestjs/microservices';
import type { RpcContract } from '@svc/contracts';
import { firstValueFrom, timeout, TimeoutError } from 'rxjs';
import { DependencyUnavailableError } from '../http/problem';
import { APP_CONFIG } from '../platform.module';
import type { AmqpConfig } from '../messaging/messaging.module';
import { AMQP_SOCKET_OPTIONS } from '../messaging/amqp-connection';
import { RPC_QUEUE_OPTIONS } from './rpc-server';

/** The other app answered, with an error of its own (not a transport failure). */
export class RpcRemoteError extends Error {
  constructor(
    readonly pattern: string,
    readonly remote: unknown,
  ) {
    super(
      `${pattern} failed: ${typeof remote === 'object' && remote !== null ? JSON.stringify(remote) : String(remote)}`,
    );
    this.name = 'RpcRemoteError';
  }
}

/**
 * Asks another app a question over RabbitMQ and returns a Promise (domain code never sees
 * RxJS or amqplib). A request that is not answered within the timeout also expires in the queue,
 * so a recovering app does not work through questions nobody waits for any more; the caller gets
 * DependencyUnavailableError, which the Problem filter answers with 503 `service_unavailable`.
 */
@Injectable()
export class RpcClient implements OnApplicationShutdown {
  private readonly clients = new Map<string, ClientRMQ>();

  /**
   * The broker user this process connects as. Every request carries it as `user_id`, which
   * RabbitMQ checks against the connection's login: the answering app knows who asks, and no
   * caller can claim to be another.
   */
  private readonly caller: string;

  constructor(@Inject(APP_CONFIG) private readonly config: AmqpConfig) {
    this.caller = brokerUserOf(config.AMQP_URL);
  }

  async call<Req, Res>(
    contract: RpcContract<Req, Res>,
    payload: Req,
    timeoutMs = this.config.RPC_TIMEOUT_MS,
  ): Promise<Res> {
    const record = new RmqRecordBuilder(payload)
      .setOptions({ expiration: String(timeoutMs), persistent: false, userId: this.caller })
      .build();
    let raw: unknown;
    try {
      raw = await firstValueFrom(
        this.client(contract.queue).send(contract.pattern, record).pipe(timeout(timeoutMs)),
      );
    } catch (err) {
      if (err instanceof TimeoutError) throw new DependencyUnavailableError(contract.queue, err);
      if (err instanceof Error) throw new DependencyUnavailableError(contract.queue, err);
      throw new RpcRemoteError(contract.pattern, err);
    }
    return contract.parseResponse(raw);
  }

  async onApplicationShutdown() {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }

  private client(queue: string): ClientRMQ {
    let client = this.clients.get(queue);
    if (!client) {
      client = new ClientRMQ({
        urls: [this.config.AMQP_URL],
        queue,
        queueOptions: RPC_QUEUE_OPTIONS,
        // The answering app declares its queue; a caller may only write to it (least privilege),
        // and a request sent before the queue exists goes unanswered like one to an app that is down.
        noAssert: true,
        persistent: false,
        socketOptions: { connectionOptions: AMQP_SOCKET_OPTIONS },
      });
      // Connection errors surface through `send`; keep them from becoming unhandled rejections.
      client.connect().catch(() => undefined);
      this.clients.set(queue, client);
    }
    return client;
  }
}

/** The login of an AMQP URL (amqplib logs in as guest when the URL names none). */
export function brokerUserOf(amqpUrl: string): string {
  const user = new URL(amqpUrl).username;
  return user === '' ? 'guest' : decodeURIComponent(user);
}
