import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import { createLogger } from '../../libs/platform/src/logging/logger';
import { AmqpConnection, type InboundMessage } from '../../libs/platform/src/messaging/amqp-connection';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually, testServices } from '../support/services';

/** Consumers against a real RabbitMQ: manual acks, bounded retries, reconnects, draining. */
const services = testServices();
const logger = createLogger('amqp-test', 'silent');
let inspector: amqp.ChannelModel;
let channel: amqp.Channel;
const connections: AmqpConnection[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  inspector = await amqp.connect(services.amqpUrl);
  channel = await inspector.createChannel();
});

afterAll(async () => {
  await inspector.close();
});

afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => c.close()));
  await Promise.all(proxies.splice(0).map((p) => p.stop()));
});

function connect(url = services.amqpUrl): AmqpConnection {
  const connection = new AmqpConnection(
    { url, name: 'amqp-test', prefetch: 5, minBackoffMs: 50, maxBackoffMs: 200 },
    logger,
  );
  connections.push(connection);
  connection.start();
  return connection;
}

/** A work queue dead-lettering into `<name>.dead`, both removed when the test's connection closes. */
async function declareQueue(connection: AmqpConnection): Promise<{ queue: string; dead: string }> {
  const queue = `amqp-test.${randomBytes(6).toString('hex')}`;
  const dead = `${queue}.dead`;
  await connection.addTopology(async (ch) => {
    await ch.assertQueue(dead, { durable: false, autoDelete: false });
    await ch.assertQueue(queue, {
      durable: false,
      arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dead },
    });
  });
  return { queue, dead };
}

async function depth(queue: string): Promise<number> {
  return (await channel.checkQueue(queue)).messageCount;
}

describe('AmqpConnection consumers', () => {
  it('publishes persistent messages with confirms and acks each after its handler resolves', async () => {
    const connection = connect();
    await connection.waitUntilConnected(5000);
    const { queue } = await declareQueue(connection);
    const seen: string[] = [];
    await connection.consume(queue, async (m: InboundMessage) => {
      seen.push(m.properties.messageId as string);
    });
    for (let i = 0; i < 20; i += 1) {
      await connection.publish('', queue, Buffer.from('{}'), { messageId: `m${i}` });
    }
    await eventually(async () => (seen.length === 20 ? true : undefined));
    expect(new Set(seen).size).toBe(20);
    await eventually(async () => ((await depth(queue)) === 0 ? true : undefined));
  });

  it('retries a failed message once, then dead-letters it instead of spinning', async () => {
    const connection = connect();
    await connection.waitUntilConnected(5000);
    const { queue, dead } = await declareQueue(connection);
    const attempts: boolean[] = [];
    await connection.consume(queue, async (m) => {
      attempts.push(m.redelivered);
      throw new Error('handler cannot process this message');
    });
    await connection.publish('', queue, Buffer.from('{"poison":true}'), { messageId: 'poison' });
    await eventually(async () => ((await depth(dead)) === 1 ? true : undefined));
    expect(attempts).toEqual([false, true]);
    const parked = await channel.get(dead, { noAck: true });
    expect(parked && parked.properties.messageId).toBe('poison');
  });

  it('re-attaches its consumers after the connection drops', async () => {
    const target = new URL(services.amqpUrl);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5672));
    proxies.push(proxy);
    await proxy.start();
    const viaProxy = new URL(services.amqpUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const connection = connect(viaProxy.toString());
    await connection.waitUntilConnected(5000);
    const { queue } = await declareQueue(connection);
    const seen: string[] = [];
    await connection.consume(queue, async (m) => {
      seen.push(m.content.toString());
    });

    await proxy.cut();
    await eventually(async () => (!connection.isConnected() ? true : undefined));
    await channel.sendToQueue(queue, Buffer.from('sent while the consumer was cut off'));
    await proxy.restore();
    await eventually(
      async () => (seen.includes('sent while the consumer was cut off') ? true : undefined),
      10_000,
    );
  });

  it('attaches again when RabbitMQ cancels its consumer while the connection lives on', async () => {
    const connection = connect();
    await connection.waitUntilConnected(5000);
    const { queue } = await declareQueue(connection);
    const seen: string[] = [];
    await connection.consume(queue, async (m) => {
      seen.push(m.content.toString());
    });
    await channel.sendToQueue(queue, Buffer.from('before'));
    await eventually(async () => (seen.includes('before') ? true : undefined));

    // Deleting the queue cancels its consumers (basic.cancel); the app's topology declares it again.
    await channel.deleteQueue(queue);
    await eventually(async () => {
      const ok = await inspector.createChannel();
      ok.on('error', () => undefined);
      const found = await ok.checkQueue(queue).then(
        (q) => q.consumerCount,
        () => 0,
      );
      await ok.close().catch(() => undefined);
      return found === 1 ? true : undefined;
    }, 10_000);
    expect(connection.isConnected()).toBe(true);
    await channel.sendToQueue(queue, Buffer.from('after the cancel'));
    await eventually(async () => (seen.includes('after the cancel') ? true : undefined), 10_000);
  });

  it('publishes on a new channel after the broker refuses a message (a nack)', async () => {
    const connection = connect();
    await connection.waitUntilConnected(5000);
    const queue = `amqp-test.${randomBytes(6).toString('hex')}`;
    // One message at most, and refuse the next: the broker nacks it.
    await channel.assertQueue(queue, {
      durable: false,
      autoDelete: false,
      arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    });
    const channelOf = () => (connection as unknown as { publishChannel?: object }).publishChannel;
    try {
      await connection.publish('', queue, Buffer.from('kept'));
      const first = channelOf();
      await expect(connection.publish('', queue, Buffer.from('refused'))).rejects.toThrow(/nack/i);
      await eventually(async () => (channelOf() && channelOf() !== first ? true : undefined));
      await channel.purgeQueue(queue);
      await connection.publish('', queue, Buffer.from('after the renewal'));
      const got = await channel.get(queue, { noAck: true });
      expect(got && got.content.toString()).toBe('after the renewal');
    } finally {
      await channel.deleteQueue(queue);
    }
  });

  it('drain stops new deliveries and waits for the running handler to finish and ack', async () => {
    const connection = connect();
    await connection.waitUntilConnected(5000);
    const { queue } = await declareQueue(connection);
    let finished = 0;
    let started = 0;
    await connection.consume(
      queue,
      async () => {
        started += 1;
        await new Promise((r) => setTimeout(r, 500));
        finished += 1;
      },
      { prefetch: 1 },
    );
    for (let i = 0; i < 3; i += 1) await connection.publish('', queue, Buffer.from(String(i)));
    await eventually(async () => (started === 1 ? true : undefined));
    await connection.drain();
    expect(finished).toBe(1);
    await new Promise((r) => setTimeout(r, 700));
    expect(started).toBe(1);
    // The handled message was acked; the two never delivered stay queued for another replica.
    await eventually(async () => ((await depth(queue)) === 2 ? true : undefined));
  });

  it('a message still running never holds back the acks of the ones that finished after it', async () => {
    const connection = connect();
    await connection.waitUntilConnected(5000);
    const { queue } = await declareQueue(connection);
    const total = 40;
    let others = 0;
    let releaseFirst: () => void = () => undefined;
    const othersDone = new Promise<void>((r) => (releaseFirst = r));
    let first = true;
    // With 5 in flight, the first message finishes only after the 39 others: their acks must reach
    // the broker while it still runs, or no further message is ever delivered.
    await connection.consume(
      queue,
      async () => {
        if (first) {
          first = false;
          await othersDone;
          return;
        }
        others += 1;
        if (others === total - 1) releaseFirst();
      },
      { prefetch: 5 },
    );
    await Promise.all(
      Array.from({ length: total }, (_, i) => connection.publish('', queue, Buffer.from(String(i)))),
    );
    await eventually(async () => (others === total - 1 ? true : undefined), 15_000);
    await eventually(async () => ((await depth(queue)) === 0 ? true : undefined));
  });

  it('close() while the connection is still being opened leaves no connection behind', async () => {
    const target = new URL(services.amqpUrl);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5672));
    proxies.push(proxy);
    const port = await proxy.start();
    // The broker answers only after 300 ms: close() surely arrives while the connection opens.
    proxy.connectDelayMs = 300;
    const viaProxy = new URL(services.amqpUrl);
    viaProxy.port = String(port);
    const connection = new AmqpConnection(
      { url: viaProxy.toString(), name: 'amqp-test-closing', prefetch: 5 },
      logger,
    );
    connection.start();
    // The socket is opening (or the AMQP handshake is under way) when close() arrives.
    await eventually(async () => (proxy.openSockets > 0 ? true : undefined), 5000, 5);
    expect(connection.isConnected()).toBe(false);
    await connection.close();
    expect(connection.isConnected()).toBe(false);
    await eventually(async () => (proxy.openSockets === 0 ? true : undefined), 5000);
    // And it stays closed: no reconnect follows.
    await new Promise((r) => setTimeout(r, 500));
    expect(proxy.openSockets).toBe(0);
  });
});
