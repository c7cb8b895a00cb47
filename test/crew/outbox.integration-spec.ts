import { randomBytes } from 'node:crypto';
import {
  CREW_EVENTS_EXCHANGE,
  EVENT_BATCH_CONTENT_TYPE,
  EVENTS_PER_MESSAGE,
  parseEventBatch,
} from '@svc/contracts';
import {
  AmqpConnection,
  createLogger,
  dataSourceOptions,
  OutboxRelay,
  OutboxRepository,
  type OutboxRelayOptions,
  Sql,
  TransactionRunner,
} from '@svc/platform';
import * as amqp from 'amqplib';
import { DataSource } from 'typeorm';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually, testServices } from '../support/services';

/**
 * The outbox of record events, against real PostgreSQL and RabbitMQ: a change and its event
 * commit together or not at all, and each committed event reaches the broker.
 */
const services = testServices();
const logger = createLogger('outbox-test', 'silent');
let dataSource: DataSource;
let repository: OutboxRepository;
let inspector: amqp.ChannelModel;
let channel: amqp.Channel;
let routingKey: string;
let queue: string;
const running: { relay: OutboxRelay; connection: AmqpConnection }[] = [];

beforeAll(async () => {
  dataSource = new DataSource(
    dataSourceOptions(
      'outbox-test',
      { DATABASE_URL: services.databaseUrl, DATABASE_POOL_SIZE: 6 },
      { schema: 'crew', migrations: [] },
    ),
  );
  await dataSource.initialize();
  repository = new OutboxRepository(new Sql(dataSource, 'outbox-test'));
  inspector = await amqp.connect(services.amqpUrl);
  channel = await inspector.createChannel();
  await channel.assertExchange(CREW_EVENTS_EXCHANGE, 'topic', { durable: true });
});

afterAll(async () => {
  await inspector.close();
  await dataSource.destroy();
});

beforeEach(async () => {
  await dataSource.query('DELETE FROM crew.outbox_messages');
  routingKey = `test.outbox.${randomBytes(6).toString('hex')}`;
  queue = (await channel.assertQueue('', { exclusive: true })).queue;
  await channel.bindQueue(queue, CREW_EVENTS_EXCHANGE, routingKey);
});

afterEach(() => stopRelays());

async function stopRelays() {
  await Promise.all(
    running.splice(0).map(async ({ relay, connection }) => {
      await relay.stop();
      await connection.close();
    }),
  );
}

async function startRelay(amqpUrl = services.amqpUrl, start = true, options: OutboxRelayOptions = {}) {
  const connection = new AmqpConnection(
    {
      url: amqpUrl,
      name: 'outbox-test',
      prefetch: 10,
      minBackoffMs: 50,
      maxBackoffMs: 200,
      publishWaitMs: 300,
    },
    logger,
  );
  connection.start();
  const relay = new OutboxRelay(new TransactionRunner(dataSource), repository, connection, logger, {
    batchSize: 25,
    idleMs: 50,
    ...options,
  });
  running.push({ relay, connection });
  if (start) relay.start();
  return { relay, connection };
}

async function writeEvents(
  count: number,
  options: { rollback?: boolean; routingKey?: string } = {},
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `evt_${randomBytes(9).toString('base64url')}`);
  await dataSource.transaction(async (manager) => {
    for (const messageId of ids) {
      await repository.add(manager, {
        messageId,
        exchange: CREW_EVENTS_EXCHANGE,
        routingKey: options.routingKey ?? routingKey,
        payload: { id: messageId },
      });
    }
    if (options.rollback) throw new Error('the record change failed');
  });
  return ids;
}

/** Everything in the test queue, once it has been quiet for a moment. */
async function received(quietMs = 400): Promise<amqp.GetMessage[]> {
  const messages: amqp.GetMessage[] = [];
  let quietSince = Date.now();
  while (Date.now() - quietSince < quietMs) {
    const msg = await channel.get(queue, { noAck: true });
    if (msg) {
      messages.push(msg);
      quietSince = Date.now();
    } else {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return messages;
}

/** The message ids of the events received, those of packed messages in their order in the message. */
function eventIds(messages: amqp.GetMessage[]): string[] {
  return messages.flatMap((m) =>
    m.properties.contentType === EVENT_BATCH_CONTENT_TYPE
      ? parseEventBatch(JSON.parse(m.content.toString())).map((entry) => entry.message_id)
      : [m.properties.messageId as string],
  );
}

async function unpublished(): Promise<number> {
  const [row] = await dataSource.query<{ n: string }[]>(
    'SELECT count(*) AS n FROM crew.outbox_messages WHERE published_at IS NULL',
  );
  return Number(row.n);
}

describe('transactional outbox', () => {
  it('publishes nothing for a rolled-back transaction', async () => {
    await expect(writeEvents(3, { rollback: true })).rejects.toThrow('the record change failed');
    const { relay, connection } = await startRelay(services.amqpUrl, false);
    await connection.waitUntilConnected(5000);
    await expect(relay.relayOnce()).resolves.toBe(0);
    const [row] = await dataSource.query<{ n: string }[]>('SELECT count(*) AS n FROM crew.outbox_messages');
    expect(Number(row.n)).toBe(0);
    expect(await received()).toHaveLength(0);
  });

  it('publishes a committed message once, persistent, with its id, even with two relays running', async () => {
    await startRelay();
    await startRelay();
    const ids = (await Promise.all(Array.from({ length: 8 }, () => writeEvents(25)))).flat();
    await eventually(async () => ((await unpublished()) === 0 ? true : undefined), 15_000);
    const messages = await received();
    const seen = messages.map((m) => m.properties.messageId as string);
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(messages.every((m) => m.properties.deliveryMode === 2)).toBe(true);
    expect(JSON.parse(messages[0].content.toString())).toEqual({ id: seen[0] });
    const [row] = await dataSource.query<{ max: number }[]>(
      'SELECT max(attempts) AS max FROM crew.outbox_messages',
    );
    expect(row.max).toBe(1);
  });

  it('publishes oldest first, each message marked published once with one attempt', async () => {
    const ids = await writeEvents(60);
    const { relay, connection } = await startRelay(services.amqpUrl, false);
    await connection.waitUntilConnected(5000);
    // Batches of 25: three passes, each one claim (and mark) of the oldest left.
    await expect(relay.relayOnce()).resolves.toBe(25);
    await expect(relay.relayOnce()).resolves.toBe(25);
    await expect(relay.relayOnce()).resolves.toBe(10);
    await expect(relay.relayOnce()).resolves.toBe(0);
    expect((await received()).map((m) => m.properties.messageId as string)).toEqual(ids);
    const rows = await dataSource.query<
      { attempts: number; published: boolean; last_error: string | null }[]
    >(`SELECT attempts, published_at IS NOT NULL AS published, last_error FROM crew.outbox_messages`);
    expect(rows).toHaveLength(60);
    expect(rows.every((r) => r.attempts === 1 && r.published && r.last_error === null)).toBe(true);
  });

  it.each([
    ['one to a message', () => false],
    ['packed', (key: string) => key === routingKey],
  ])(
    'keeps messages committed while RabbitMQ is unreachable and publishes them when it returns (%s)',
    async (_case, batchable) => {
      const target = new URL(services.amqpUrl);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5672));
      await proxy.start();
      const viaProxy = new URL(services.amqpUrl);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      try {
        const { connection } = await startRelay(viaProxy.toString(), true, { batchable });
        await connection.waitUntilConnected(5000);
        await proxy.cut();
        const ids = await writeEvents(5);
        // Each refused pass puts the claimed messages back, unpublished, with the reason.
        await eventually(async () => {
          const [row] = await dataSource.query<{ n: string }[]>(
            `SELECT count(*) AS n FROM crew.outbox_messages
            WHERE published_at IS NULL AND attempts >= 1 AND last_error LIKE 'RabbitMQ unavailable%'`,
          );
          return Number(row.n) === 5 ? true : undefined;
        }, 10_000);
        expect(await unpublished()).toBe(5);
        expect(await received(100)).toHaveLength(0);

        await proxy.restore();
        await eventually(async () => ((await unpublished()) === 0 ? true : undefined), 15_000);
        const seen = eventIds(await received());
        expect(seen).toHaveLength(ids.length);
        expect(new Set(seen)).toEqual(new Set(ids));
      } finally {
        await stopRelays();
        await proxy.stop();
      }
    },
  );

  it('packs the events of a batchable routing key, up to the most per message, in order, a lone one too; the rest go one to a message', async () => {
    const otherKey = `${routingKey}.internal`;
    await channel.bindQueue(queue, CREW_EVENTS_EXCHANGE, otherKey);
    const packedIds = await writeEvents(EVENTS_PER_MESSAGE + 1);
    const otherIds = await writeEvents(2, { routingKey: otherKey });
    // One event written under a trace: its entry carries the writer's context.
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await dataSource.query(`UPDATE crew.outbox_messages SET trace_context = $1 WHERE message_id = $2`, [
      traceparent,
      packedIds[1],
    ]);
    const { relay, connection } = await startRelay(services.amqpUrl, false, {
      batchable: (key) => key === routingKey,
    });
    await connection.waitUntilConnected(5000);
    await expect(relay.relayOnce()).resolves.toBe(EVENTS_PER_MESSAGE + 3);

    const messages = await received();
    // 21 events of the batchable key: 20 packed, then the last one in a pack of its own; the other
    // key's 2 alone.
    expect(messages.map((m) => [m.fields.routingKey, m.properties.contentType])).toEqual([
      [routingKey, EVENT_BATCH_CONTENT_TYPE],
      [routingKey, EVENT_BATCH_CONTENT_TYPE],
      [otherKey, 'application/json'],
      [otherKey, 'application/json'],
    ]);
    expect(eventIds(messages)).toEqual([...packedIds, ...otherIds]);
    expect(messages[0].properties.messageId).toBe(`batch:${packedIds[0]}`);
    expect(messages[0].properties.deliveryMode).toBe(2);
    expect(parseEventBatch(JSON.parse(messages[0].content.toString())).slice(0, 3)).toEqual([
      { message_id: packedIds[0], payload: { id: packedIds[0] } },
      { message_id: packedIds[1], traceparent, payload: { id: packedIds[1] } },
      { message_id: packedIds[2], payload: { id: packedIds[2] } },
    ]);
    expect(messages[1].properties.messageId).toBe(`batch:${packedIds[EVENTS_PER_MESSAGE]}`);
    expect(parseEventBatch(JSON.parse(messages[1].content.toString()))).toEqual([
      { message_id: packedIds[EVENTS_PER_MESSAGE], payload: { id: packedIds[EVENTS_PER_MESSAGE] } },
    ]);
    expect(await unpublished()).toBe(0);
  });
});
