import type { INestApplication } from '@nestjs/common';
import { RmqContext, Server, type CustomTransportStrategy, type WritePacket } from '@nestjs/microservices';
import { appOfBrokerUser, RPC_CONTRACTS, type NestAppName, type RpcCallers } from '@svc/contracts';
import { AmqpConnection, type InboundMessage } from '../messaging/amqp-connection';
import { contextFromHeaders, inSpan, markSpanError, SpanKind } from '../tracing/tracing';

/**
 * What a pattern without a handler answers: the text Nest's own servers answer, so that callers
 * of either kind read it as before.
 */
const NO_MESSAGE_HANDLER = 'There is no matching message handler defined in the remote service.';

/**
 * Quorum, though a request is worthless after its caller's timeout: a classic queue lives on one
 * node, and while that node is down every RPC to the app fails (docs/architecture.md, "RPC").
 */
export const RPC_QUEUE_OPTIONS = { durable: true, arguments: { 'x-queue-type': 'quorum' } } as const;

/**
 * Serves the app's `@MessagePattern` handlers from its RPC queue, as a Nest transport over the
 * app's AmqpConnection (Nest's RMQ envelope): a request is acked once its answer is sent (a crash
 * before that redelivers it), at most `prefetch` at a time.
 *
 * A request is answered only to the apps its contract names (`callers`), known by the message's
 * `user_id`, which RabbitMQ checks against the publishing connection's user (`appOfBrokerUser`);
 * anyone else gets `access_denied` and reaches no handler (docs/architecture.md, "RPC").
 */
export class RpcServer extends Server implements CustomTransportStrategy {
  /** The apps that may ask each pattern this queue answers. */
  private readonly callers: ReadonlyMap<string, readonly NestAppName[]>;

  constructor(
    private readonly amqp: AmqpConnection,
    private readonly queue: string,
    private readonly prefetch: number,
    contracts: readonly RpcCallers[] = RPC_CONTRACTS,
  ) {
    super();
    this.callers = new Map(contracts.filter((c) => c.queue === queue).map((c) => [c.pattern, c.callers]));
  }

  /**
   * Resolves once the queue is consumed, as Nest's RMQ server did: the app then serves HTTP (and
   * its callers) only when it answers RPC too, however long RabbitMQ takes to come up.
   */
  listen(callback: (err?: unknown) => void): void {
    this.amqp.start();
    this.amqp
      .addTopology(async (channel) => {
        await channel.assertQueue(this.queue, RPC_QUEUE_OPTIONS);
      })
      .then(() => this.amqp.consume(this.queue, (m) => this.answer(m), { prefetch: this.prefetch }))
      .then(() => this.amqp.waitUntilConnected(2 ** 31 - 1))
      .then(() => callback(), callback);
  }

  close(): void {
    // The connection's drain cancels the consumer and waits for the answers under way.
  }

  on(): void {
    throw new Error('RpcServer emits no events');
  }

  unwrap<T>(): T {
    return this.amqp as T;
  }

  private async answer(message: InboundMessage): Promise<void> {
    const { correlationId, replyTo } = message.properties;
    const packet = JSON.parse(message.content.toString('utf8')) as {
      pattern?: unknown;
      data?: unknown;
      id?: unknown;
    };
    // Nothing to answer without an id and a reply address (Nest would take it for an event).
    if (packet.id === undefined || typeof replyTo !== 'string') return;
    const reply = (answer: WritePacket) => {
      try {
        this.amqp.send(replyTo, Buffer.from(JSON.stringify(answer)), { correlationId });
      } catch (err) {
        // The broker went away (a restart, a failover): the caller times out and asks again.
        this.logger.warn(`an RPC reply was lost (${err instanceof Error ? err.message : String(err)})`);
      }
    };
    const pattern = this.getPatternAsString(packet.pattern);
    const caller = appOfBrokerUser(message.properties.userId);
    if (caller === undefined || !this.callers.get(pattern)?.includes(caller)) {
      // Both come from the message: bounded, so a refused flood cannot write long lines.
      const who =
        message.properties.userId === undefined
          ? 'a request without user_id'
          : `user ${JSON.stringify(String(message.properties.userId).slice(0, 100))}`;
      this.logger.warn(
        `RPC ${JSON.stringify(pattern.slice(0, 200))} refused to ${who}: not among the callers its contract names`,
      );
      return reply({
        id: packet.id,
        err: { error: 'access_denied', message: `${pattern} is not answered to this caller` },
        status: 'error',
      } as WritePacket);
    }
    const handler = this.getHandlerByPattern(pattern);
    if (!handler) {
      this.logger.warn(`no RPC handler for ${pattern}`);
      return reply({ id: packet.id, err: NO_MESSAGE_HANDLER, status: 'error' } as WritePacket);
    }
    const context = new RmqContext([message, undefined, pattern]);
    // A child of the caller's span: its trace goes on through this app's handling.
    await inSpan(
      pattern,
      {
        kind: SpanKind.SERVER,
        parent: contextFromHeaders(message.properties.headers),
        attributes: { 'rpc.system': 'rabbitmq', 'rpc.method': pattern },
      },
      async (span) => {
        const answer$ = this.transformToObservable(await handler(packet.data, context));
        await new Promise<void>((resolve) =>
          this.send(answer$, (answer) => {
            if (answer.err !== undefined && answer.err !== null)
              markSpanError(span, 'answered with an error');
            reply(answer);
            if (answer.isDisposed) resolve();
          }),
        );
      },
    );
  }
}

/**
 * Serves the app's `@MessagePattern` handlers on its RPC queue, each to the callers its contract
 * in `contracts` names (every contract of libs/contracts unless a test brings its own).
 */
export function connectRpcServer(
  app: INestApplication,
  config: { readonly AMQP_PREFETCH: number },
  queue: string,
  contracts?: readonly RpcCallers[],
): void {
  app.connectMicroservice({
    strategy: new RpcServer(app.get(AmqpConnection), queue, config.AMQP_PREFETCH, contracts),
  });
}
