import { AMQP_SOCKET_OPTIONS } from '../messaging/amqp-connection';
import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import {
  ServerRMQ,
  type MicroserviceOptions,
  type NestMicroservice,
  type RmqContext,
  type RmqOptions,
} from '@nestjs/microservices';
import { finalize, type Observable } from 'rxjs';

/**
 * RPC request queues are durable classic queues: a request is worth nothing after its caller's
 * timeout (each carries a matching `expiration`), so quorum replication would buy nothing.
 */
export const RPC_QUEUE_OPTIONS = { durable: true } as const;

/** Acks an RPC request once its handler has answered (manual acks; a crash redelivers). */
@Injectable()
export class RpcAckInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const rmq = context.switchToRpc().getContext<RmqContext>();
    return next.handle().pipe(
      finalize(() => {
        const channel = rmq.getChannelRef() as { ack(msg: unknown): void };
        try {
          channel.ack(rmq.getMessage());
        } catch {
          // Channel closed meanwhile: the broker redelivers, the caller has timed out already.
        }
      }),
    );
  }
}

interface ReplyChannel {
  sendToQueue(...args: unknown[]): Promise<unknown>;
}

/**
 * Nest's RMQ server, whose replies cannot crash the process: Nest sends a reply without waiting on
 * it, so a reply lost because the broker went away (a restart, a failover) would be an unhandled
 * rejection. Here it is a warning; the caller times out and asks again.
 */
export class RpcServer extends ServerRMQ {
  private guarded?: unknown;

  override sendMessage(...args: Parameters<ServerRMQ['sendMessage']>): void {
    const channel = this.channel as unknown as ReplyChannel | null;
    if (channel && this.guarded !== channel) {
      const send = channel.sendToQueue.bind(channel);
      channel.sendToQueue = (...sendArgs: unknown[]) => {
        const sent = send(...sendArgs);
        sent.catch((err: unknown) =>
          this.logger.warn(`an RPC reply was lost (${err instanceof Error ? err.message : String(err)})`),
        );
        return sent;
      };
      this.guarded = channel;
    }
    super.sendMessage(...args);
  }
}

/** Serves the app's `@MessagePattern` handlers on its RPC queue. */
export function connectRpcServer(
  app: INestApplication,
  config: { AMQP_URL: string; AMQP_PREFETCH: number },
  queue: string,
): void {
  // Deferred, so the ack interceptor is in place before the handlers are bound (an interceptor
  // added later is ignored, and unacked requests would stall the queue at `prefetch`). The app's
  // own init runs the module hooks; the microservice must not run them a second time.
  const options: RmqOptions['options'] = {
    urls: [config.AMQP_URL],
    queue,
    queueOptions: RPC_QUEUE_OPTIONS,
    noAck: false,
    prefetchCount: config.AMQP_PREFETCH,
    socketOptions: { connectionOptions: AMQP_SOCKET_OPTIONS },
  };
  const server = app.connectMicroservice<MicroserviceOptions>(
    { strategy: new RpcServer(options) },
    { deferInitialization: true },
  );
  server.useGlobalInterceptors(new RpcAckInterceptor());
  (server as unknown as NestMicroservice).setIsInitHookCalled(true);
}
