import * as amqp from 'amqplib';
import type { Logger } from 'pino';
import { AckBatcher } from './ack-batcher';

/**
 * amqplib leaves Nagle's algorithm on: a small frame (a publish, an RPC reply, an ack) written
 * while an earlier one is unacknowledged waits for the peer's delayed ACK, so every RPC would
 * stall for it whatever the load.
 */
const AMQP_SOCKET_OPTIONS = { noDelay: true } as const;

/** RabbitMQ's pseudo-queue for answers to the channel that sent the request ("direct reply-to"). */
export const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

export interface InboundMessage {
  readonly content: Buffer;
  readonly routingKey: string;
  readonly exchange: string;
  readonly redelivered: boolean;
  readonly properties: amqp.MessageProperties;
}

/** Resolves when the message is handled; it is acked then (within moments, see AckBatcher). A throw nacks it (see `consume`). */
export type MessageHandler = (message: InboundMessage) => Promise<void>;

/** What a topology declaration may do: the apps declare their queues without touching amqplib. */
export type TopologyChannel = Pick<
  amqp.Channel,
  'assertExchange' | 'assertQueue' | 'bindQueue' | 'unbindQueue'
>;

export type TopologySetup = (channel: TopologyChannel) => Promise<void>;

/** `userId`, when given, RabbitMQ checks against the connection's login (see `user`). */
export type PublishOptions = amqp.Options.Publish;

export class BrokerUnavailableError extends Error {
  constructor(reason: string) {
    super(`RabbitMQ unavailable: ${reason}`);
    this.name = 'BrokerUnavailableError';
  }
}

interface ConsumerRegistration {
  readonly queue: string;
  readonly handler: MessageHandler;
  readonly prefetch?: number;
  channel?: amqp.Channel;
  acks?: AckBatcher<amqp.ConsumeMessage>;
  consumerTag?: string;
  /** Attaches in a row that ended with the channel closing again (reset by a delivery). */
  reattaches?: number;
  /** The attach to come after the channel ended; at most one at a time. */
  reattachTimer?: NodeJS.Timeout;
}

export interface AmqpConnectionOptions {
  /** One broker URL, or the nodes of a cluster as URLs separated by commas (see brokerUrls). */
  readonly url: string;
  readonly name: string;
  readonly prefetch: number;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** How long `publish` waits for a connection before giving up. */
  readonly publishWaitMs?: number;
  /** How long `publish` waits for the broker's confirm; a lost connection may never send one. */
  readonly confirmTimeoutMs?: number;
}

/**
 * One AMQP connection per process, for events and RPC alike, kept alive (docs/architecture.md,
 * "RPC"): `publish` resolves only once the broker has confirmed the message, and consumers ack
 * after their handler finishes.
 */
export class AmqpConnection {
  /** The broker user this connection logs in as. */
  readonly user: string;
  private connection?: amqp.ChannelModel;
  private publishChannel?: amqp.ConfirmChannel;
  private lastRenewal = 0;
  private lastDirectRenewal = 0;
  /** Unconfirmed sends, and the direct replies to them: RabbitMQ ties both to one channel. */
  private direct?: amqp.Channel;
  private replyHandler?: (message: InboundMessage) => void;
  private repliesLost?: () => void;
  private readonly topology: TopologySetup[] = [];
  private readonly consumers: ConsumerRegistration[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private waiters: (() => void)[] = [];
  private attempt = 0;
  private started = false;
  private closing = false;
  private draining = false;
  private reconnectTimer?: NodeJS.Timeout;
  private connecting?: Promise<void>;
  private readonly urls: readonly string[];
  /** The node the next connect tries: the one after the node that failed or went away. */
  private node = 0;

  constructor(
    private readonly options: AmqpConnectionOptions,
    private readonly logger: Logger,
  ) {
    this.urls = brokerUrls(options.url);
    this.user = brokerUserOf(this.urls[0]);
  }

  /** Starts connecting in the background (once); the app starts even while RabbitMQ is down. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.connect();
  }

  isConnected(): boolean {
    return this.publishChannel !== undefined;
  }

  /** Declares exchanges/queues now (when connected) and after every reconnect. */
  async addTopology(setup: TopologySetup): Promise<void> {
    this.topology.push(setup);
    await this.connecting;
    if (this.connection) await this.withChannel(setup);
  }

  async consume(queue: string, handler: MessageHandler, options: { prefetch?: number } = {}): Promise<void> {
    const registration: ConsumerRegistration = { queue, handler, prefetch: options.prefetch };
    this.consumers.push(registration);
    // A connect under way attaches it with the others; attached twice, one consumer would be orphaned.
    await this.connecting;
    if (this.connection && !registration.channel) await this.attachConsumer(registration);
  }

  async waitUntilConnected(timeoutMs: number): Promise<void> {
    if (this.isConnected()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(new BrokerUnavailableError(`not connected within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push(done);
    });
  }

  async publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: PublishOptions = {},
  ): Promise<void> {
    await this.waitUntilConnected(this.options.publishWaitMs ?? 2000);
    const channel = this.publishChannel;
    if (!channel) throw new BrokerUnavailableError('no channel');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new BrokerUnavailableError('no publisher confirm in time')),
        this.options.confirmTimeoutMs ?? 5000,
      );
      try {
        channel.publish(
          exchange,
          routingKey,
          content,
          {
            persistent: true,
            contentType: 'application/json',
            timestamp: Math.floor(Date.now() / 1000),
            ...options,
          },
          (err) => {
            clearTimeout(timer);
            if (!err) return resolve();
            this.renewAfterNack(channel);
            reject(new BrokerUnavailableError(String(err)));
          },
        );
      } catch (err) {
        clearTimeout(timer);
        reject(new BrokerUnavailableError(err instanceof Error ? err.message : String(err)));
      }
    });
  }

  /**
   * Sends without a publisher confirm, for what is worthless once its asker stops waiting (RPC
   * requests and answers): a lost one ends as the asker's timeout. A request that asks for a
   * direct reply needs `onReplies` first. Throws BrokerUnavailableError when not connected.
   */
  send(queue: string, content: Buffer, options: PublishOptions): void {
    if (!this.direct) throw new BrokerUnavailableError('not connected');
    this.direct.sendToQueue(queue, content, { contentType: 'application/json', ...options });
  }

  /**
   * Hands every direct reply to what `send` asked to `handler`, now and after every reconnect.
   * `lost` runs when the channel the requests went out on closes (with its connection or alone):
   * their replies can never arrive, since RabbitMQ ties a direct reply to the asking channel.
   */
  async onReplies(handler: (message: InboundMessage) => void, lost?: () => void): Promise<void> {
    this.replyHandler = handler;
    this.repliesLost = lost;
    if (this.direct) await this.consumeReplies(this.direct);
  }

  /**
   * Closes the channel direct sends and replies go on and opens a new one at once (the RPC
   * client asks when not one reply came back for a whole timeout: see renewAfterNack for why a
   * channel can go on losing what is sent to a quorum queue). At most once a second.
   */
  renewDirect(): void {
    const channel = this.direct;
    const connection = this.connection;
    if (!channel || !connection || Date.now() - this.lastDirectRenewal < 1000) return;
    this.lastDirectRenewal = Date.now();
    this.logger.warn('no RPC reply for a whole timeout: sending on a new channel');
    this.dropDirect(channel);
    channel.close().catch(() => undefined);
    // At once, not after the pause a refused channel waits: nothing is wrong with the broker.
    this.openDirect(connection).catch(() => undefined);
  }

  /** Runs `fn` on a short-lived channel (topology, queue inspection in tests). */
  async withChannel<T>(fn: (channel: amqp.Channel) => Promise<T>): Promise<T> {
    if (!this.connection) throw new BrokerUnavailableError('not connected');
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      return await fn(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /**
   * Messages ready in each queue (for gauges read at scrape time), within `budgetMs`: rejects with
   * BrokerUnavailableError when not connected or slower than that, so a dead broker cannot stall
   * a scrape. Every queue must exist (a missing one fails the whole answer).
   */
  async queueDepths(queues: readonly string[], budgetMs = 500): Promise<Map<string, number>> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.withChannel(async (channel) => {
          const depths = new Map<string, number>();
          for (const queue of queues) depths.set(queue, (await channel.checkQueue(queue)).messageCount);
          return depths;
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new BrokerUnavailableError(`no answer within ${budgetMs} ms`)),
            budgetMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops taking new messages and waits for the handlers already running to ack. */
  async drain(): Promise<void> {
    this.draining = true;
    await Promise.all(
      this.consumers.map(async (c) => {
        if (c.channel && c.consumerTag) await c.channel.cancel(c.consumerTag).catch(() => undefined);
      }),
    );
    await Promise.allSettled([...this.inFlight]);
    // Acks still gathering for a shared frame go now, before anyone closes the channel.
    for (const c of this.consumers) c.acks?.flush();
  }

  async close(): Promise<void> {
    await this.drain();
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    // A connect under way finishes first (and closes what it opened), so nothing outlives close().
    await this.connecting?.catch(() => undefined);
    const connection = this.connection;
    this.connection = undefined;
    this.publishChannel = undefined;
    this.dropDirect(this.direct);
    // A connection whose peer vanished never answers close-ok; do not let shutdown wait on it.
    await Promise.race([
      connection?.close().catch(() => undefined),
      new Promise((r) => setTimeout(r, 2000).unref()),
    ]);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.doConnect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async doConnect(): Promise<void> {
    if (this.closing) return;
    try {
      const url = this.urls[this.node % this.urls.length];
      const connection = await amqp.connect(url, {
        ...AMQP_SOCKET_OPTIONS,
        clientProperties: { connection_name: this.options.name },
        heartbeat: 15,
        timeout: 5000,
      });
      // close() ran while the socket was opening: this connection is not wanted any more.
      if (this.closing) {
        await connection.close().catch(() => undefined);
        return;
      }
      connection.on('error', (err: Error) =>
        this.logger.warn({ err: err.message }, 'RabbitMQ connection error'),
      );
      connection.on('close', () => this.onConnectionLost());
      this.connection = connection;
      for (const setup of this.topology) await this.withChannel(setup);
      await this.openDirect(connection);
      await this.openPublishChannel(connection);
      if (!this.draining) for (const c of this.consumers) await this.attachConsumer(c);
      this.attempt = 0;
      this.logger.info({ connection: this.options.name }, 'RabbitMQ connected');
      const waiters = this.waiters;
      this.waiters = [];
      waiters.forEach((w) => w());
    } catch (err) {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'RabbitMQ connect failed');
      this.node += 1;
      await this.connection?.close().catch(() => undefined);
      this.connection = undefined;
      this.publishChannel = undefined;
      this.dropDirect(this.direct);
      this.scheduleReconnect();
    }
  }

  /**
   * A nack means a queue the message was routed to could not take it. Seen once in the RabbitMQ
   * failover drill (3.10): after a node stopped, crew-api's publish channel had every publish to
   * a quorum queue refused for two minutes, while RPCs through the same cluster went on. A channel
   * keeps its own view of each quorum queue's members; a new one looks them up again. So the next
   * publishes go out on a new channel (at most one renewal a second, so a queue that refuses for
   * good does not churn channels).
   */
  private renewAfterNack(channel: amqp.ConfirmChannel): void {
    if (this.publishChannel !== channel || Date.now() - this.lastRenewal < 1000) return;
    this.lastRenewal = Date.now();
    // The close handler opens the next one on the same connection.
    channel.close().catch(() => undefined);
  }

  private async openPublishChannel(connection: amqp.ChannelModel): Promise<void> {
    const channel = await connection.createConfirmChannel();
    channel.on('error', (err: Error) =>
      this.logger.warn({ err: err.message }, 'RabbitMQ publish channel error'),
    );
    channel.on('close', () => {
      if (this.publishChannel === channel) this.publishChannel = undefined;
      // When this fails, the connection is going away too: its close handler reconnects.
      if (this.connection === connection) this.openPublishChannel(connection).catch(() => undefined);
    });
    this.publishChannel = channel;
  }

  private async openDirect(connection: amqp.ChannelModel): Promise<void> {
    const channel = await connection.createChannel();
    channel.on('error', (err: Error) =>
      this.logger.warn({ err: err.message }, 'RabbitMQ direct channel error'),
    );
    channel.on('close', () => {
      this.dropDirect(channel);
      // After a pause: a channel the broker keeps closing (a refused consume) must not spin.
      setTimeout(() => {
        if (this.connection === connection && !this.direct)
          this.openDirect(connection).catch(() => undefined);
      }, this.options.minBackoffMs ?? 250).unref();
    });
    this.direct = channel;
    if (this.replyHandler) {
      await this.consumeReplies(channel).catch((err: Error) =>
        this.logger.warn({ err: err.message }, 'RabbitMQ refused the direct replies'),
      );
    }
  }

  private dropDirect(channel: amqp.Channel | undefined): void {
    if (channel === undefined || this.direct !== channel) return;
    this.direct = undefined;
    this.repliesLost?.();
  }

  private async consumeReplies(channel: amqp.Channel): Promise<void> {
    await channel.consume(DIRECT_REPLY_TO, (msg) => msg && this.replyHandler?.(inbound(msg)), {
      noAck: true,
    });
  }

  private onConnectionLost(): void {
    // Its node stopped, most likely: the next connect tries another one first.
    this.node += 1;
    this.connection = undefined;
    this.publishChannel = undefined;
    this.dropDirect(this.direct);
    for (const c of this.consumers) {
      c.channel = undefined;
      c.consumerTag = undefined;
    }
    if (this.closing) return;
    this.logger.warn('RabbitMQ connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closing || this.reconnectTimer) return;
    const min = this.options.minBackoffMs ?? 250;
    const max = this.options.maxBackoffMs ?? 10_000;
    const base = Math.min(max, min * 2 ** this.attempt);
    const delay = Math.round(base / 2 + Math.random() * (base / 2));
    this.attempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
  }

  private async attachConsumer(registration: ConsumerRegistration): Promise<void> {
    const connection = this.connection;
    if (!connection || this.draining) return;
    const channel = await connection.createChannel();
    channel.on('error', (err: Error) =>
      this.logger.warn({ err: err.message, queue: registration.queue }, 'consumer channel error'),
    );
    // A consumer channel can end while its connection lives on: the broker cancelled the consumer
    // (its queue was deleted, or a quorum queue's member moved) or closed the channel over a
    // protocol error. Without a new one this process would stop taking the queue's messages, with
    // nothing in its health to show it, until its next reconnect.
    channel.on('close', () => {
      if (registration.channel !== channel) return;
      registration.channel = undefined;
      registration.consumerTag = undefined;
      this.reattachLater(registration, connection);
    });
    registration.channel = channel;
    await channel.prefetch(registration.prefetch ?? this.options.prefetch);
    const acks = new AckBatcher<amqp.ConsumeMessage>(channel);
    registration.acks = acks;
    const { consumerTag } = await channel.consume(
      registration.queue,
      (msg) => {
        if (!msg) {
          this.logger.warn({ queue: registration.queue }, 'RabbitMQ cancelled the consumer; attaching again');
          channel.close().catch(() => undefined);
          return;
        }
        registration.reattaches = 0;
        acks.received(msg);
        const work = this.handle(acks, registration, msg);
        this.inFlight.add(work);
        void work.finally(() => this.inFlight.delete(work));
      },
      { noAck: false },
    );
    registration.consumerTag = consumerTag;
  }

  /**
   * Attaches a consumer whose channel ended again, after a pause that doubles while the broker
   * keeps refusing, as long as its connection is the live one. The topology is declared again first:
   * a deleted queue of the app's comes back as a reconnect would bring it back.
   */
  private reattachLater(registration: ConsumerRegistration, connection: amqp.ChannelModel): void {
    const min = this.options.minBackoffMs ?? 250;
    const max = this.options.maxBackoffMs ?? 10_000;
    if (registration.reattachTimer) return;
    const n = (registration.reattaches = (registration.reattaches ?? 0) + 1);
    registration.reattachTimer = setTimeout(
      () => {
        registration.reattachTimer = undefined;
        if (this.connection !== connection || this.draining || this.closing || registration.channel) return;
        void this.reattach(registration, connection);
      },
      Math.min(max, min * 2 ** (n - 1)),
    ).unref();
  }

  private async reattach(registration: ConsumerRegistration, connection: amqp.ChannelModel): Promise<void> {
    try {
      for (const setup of this.topology) await this.withChannel(setup);
      // A refused attach closes its channel, whose close handler comes back to reattachLater.
      await this.attachConsumer(registration);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, queue: registration.queue }, 'consumer attach failed');
      if (!registration.channel && this.connection === connection)
        this.reattachLater(registration, connection);
    }
  }

  private async handle(
    acks: AckBatcher<amqp.ConsumeMessage>,
    registration: ConsumerRegistration,
    msg: amqp.ConsumeMessage,
  ): Promise<void> {
    try {
      await registration.handler(inbound(msg));
      acks.ack(msg);
    } catch (err) {
      // A first failure is retried once at once (a transient error); a second goes to the
      // queue's dead-letter exchange, if it has one, instead of spinning forever.
      this.logger.error(
        { err, queue: registration.queue, redelivered: msg.fields.redelivered },
        'message handler failed',
      );
      // A channel that is gone cannot nack; the broker redelivers the message to another consumer.
      acks.nack(msg, !msg.fields.redelivered);
    }
  }
}

function inbound(msg: amqp.ConsumeMessage): InboundMessage {
  const { routingKey, exchange, redelivered } = msg.fields;
  return { content: msg.content, routingKey, exchange, redelivered, properties: msg.properties };
}

/**
 * The nodes of a cluster, tried in turn: `amqp://u:p@a:5672/v,amqp://u:p@b:5672/v`. Where a load
 * balancer (a Kubernetes Service) fronts the nodes, one URL is enough; without one, a client
 * that knows only one node stops with it.
 */
export function brokerUrls(amqpUrl: string): string[] {
  return amqpUrl
    .split(/,(?=amqps?:\/\/)/)
    .map((u) => u.trim())
    .filter(Boolean);
}

/** The login of an AMQP URL (amqplib logs in as guest when the URL names none). */
export function brokerUserOf(amqpUrl: string): string {
  const user = new URL(amqpUrl).username;
  return user === '' ? 'guest' : decodeURIComponent(user);
}
