import { randomBytes } from 'node:crypto';
import { Controller, Module } from '@nestjs/common';
import { Ctx, MessagePattern, Payload, RmqContext, RpcException } from '@nestjs/microservices';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RpcContract } from '@svc/contracts';
import * as amqp from 'amqplib';
import { createLogger } from '../../libs/platform/src/logging/logger';
import { DependencyUnavailableError } from '../../libs/platform/src/http/problem';
import { AmqpConnection, brokerUserOf } from '../../libs/platform/src/messaging/amqp-connection';
import { MessagingModule } from '../../libs/platform/src/messaging/messaging.module';
import { AppMetrics } from '../../libs/platform/src/metrics/app-metrics';
import { PlatformModule } from '../../libs/platform/src/platform.module';
import { RpcClient, RpcRemoteError } from '../../libs/platform/src/rpc/rpc-client';
import { connectRpcServer } from '../../libs/platform/src/rpc/rpc-server';
import { startHttpApp } from '../support/http-app';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually, testServices } from '../support/services';
import { sample } from '../support/metrics';
import { appBrokerUrl } from '../../scripts/lib/credentials.cjs';

/** RpcClient and the RPC transport against a real RabbitMQ, on a queue of this run's own. */
const services = testServices();
const queue = `rpc.test-${randomBytes(4).toString('hex')}`;
const idleQueue = `${queue}.idle`;
/** A test contract of this file's queue, asked by crew-api (whose broker user the callers log in as). */
const contract = <Res>(pattern: string, to = queue): RpcContract<unknown, Res> => ({
  pattern,
  queue: to,
  callers: ['crew-api'],
  parseRequest: (input) => input,
  parseResponse: (input) => input as Res,
});
const ECHO = contract<{ got: unknown; caller: unknown }>('test.echo');
/** What the server answers: its handlers' patterns, and one that no handler takes. */
const SERVED = [ECHO, contract('test.refuse'), contract('test.unknown')];
const asCrewApi = (url: string) => appBrokerUrl('crew-api', url);

@Controller()
class TestHandlers {
  @MessagePattern('test.echo')
  echo(@Payload() payload: unknown, @Ctx() context: RmqContext) {
    const message = context.getMessage() as { properties: { userId?: unknown } };
    return Promise.resolve({ got: payload, caller: message.properties.userId });
  }

  @MessagePattern('test.refuse')
  refuse(): never {
    throw new RpcException({ error: 'access_denied', message: 'not you' });
  }
}

@Module({ controllers: [TestHandlers] })
class TestHandlersModule {}

/** The run's RabbitMQ through a TCP proxy of its own, so a test can cut that one path. */
async function proxiedAmqp(): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(services.amqpUrl);
  const relay = new TcpProxy(target.hostname, Number(target.port || 5672));
  target.hostname = '127.0.0.1';
  target.port = String(await relay.start());
  return { proxy: relay, url: target.toString() };
}

/** `rpc_client_duration_seconds_count` of one pattern and outcome, as `metrics` renders it now. */
const callCount = async (metrics: AppMetrics, pattern: string, outcome: string) =>
  sample(await metrics.render(), 'rpc_client_duration_seconds_count', { pattern, outcome });

let inspector: amqp.ChannelModel;
let ch: amqp.Channel;
let proxy: TcpProxy;
let server: NestFastifyApplication;
let caller: AmqpConnection;
let rpc: RpcClient;

beforeAll(async () => {
  inspector = await amqp.connect(services.amqpUrl);
  ch = await inspector.createChannel();
  let serverAmqpUrl: string;
  ({ proxy, url: serverAmqpUrl } = await proxiedAmqp());
  ({ app: server } = await startHttpApp(
    'rpc-test',
    (platform) => ({
      module: class RpcTestRoot {},
      imports: [PlatformModule.forRoot(platform), MessagingModule.forRoot(), TestHandlersModule],
    }),
    { AMQP_URL: serverAmqpUrl, AMQP_PREFETCH: 5 },
  ));
  connectRpcServer(server, { AMQP_PREFETCH: 5 }, queue, SERVED);
  await server.startAllMicroservices();
  caller = new AmqpConnection(
    { url: asCrewApi(services.amqpUrl), name: 'rpc-test-caller', prefetch: 5 },
    createLogger('rpc-test', 'silent'),
  );
  caller.start();
  rpc = new RpcClient(caller, { RPC_TIMEOUT_MS: 5000 });
});

afterAll(async () => {
  await caller.close();
  await server.close();
  await proxy.stop();
  await ch.deleteQueue(queue);
  await ch.deleteQueue(idleQueue);
  await inspector.close();
});

describe('RPC over AmqpConnection', () => {
  it("answers with the handler's result, and the handler knows the caller by its broker user", async () => {
    const answers = await Promise.all([1, 2, 3].map((n) => rpc.call(ECHO, { n })));
    expect(answers).toEqual(
      [1, 2, 3].map((n) => ({ got: { n }, caller: brokerUserOf(asCrewApi(services.amqpUrl)) })),
    );
    // Acked once answered: nothing stays in the queue.
    await eventually(async () => {
      const { messageCount } = await ch.checkQueue(queue);
      return messageCount === 0 ? true : undefined;
    });
  });

  it("gives the caller the answering app's error as RpcRemoteError, and the same for an unknown pattern", async () => {
    const refused = await rpc.call(contract('test.refuse'), {}).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RpcRemoteError);
    expect((refused as RpcRemoteError).remote).toEqual({ error: 'access_denied', message: 'not you' });
    const unknown = await rpc.call(contract('test.unknown'), {}).catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(RpcRemoteError);
    expect(String((unknown as RpcRemoteError).remote)).toMatch(/no matching message handler/);
  });

  it('refuses a pattern its contracts do not name, and a caller they do not name, before any handler', async () => {
    // test.echo has a handler, but no contract of this server declares `test.undeclared`.
    const undeclared = await rpc.call(contract('test.undeclared'), {}).catch((err: unknown) => err);
    expect((undeclared as RpcRemoteError).remote).toMatchObject({ error: 'access_denied' });
    const own = new AmqpConnection(
      { url: appBrokerUrl('consent-ui', services.amqpUrl), name: 'rpc-test-stranger', prefetch: 5 },
      createLogger('rpc-test', 'silent'),
    );
    own.start();
    try {
      const stranger = await new RpcClient(own, { RPC_TIMEOUT_MS: 5000 })
        .call(ECHO, { n: 1 })
        .catch((err: unknown) => err);
      expect(stranger).toBeInstanceOf(RpcRemoteError);
      expect((stranger as RpcRemoteError).remote).toEqual({
        error: 'access_denied',
        message: 'test.echo is not answered to this caller',
      });
    } finally {
      await own.close();
    }
  });

  it('fails an unanswered request with DependencyUnavailableError, and the request expires in its queue', async () => {
    await ch.assertQueue(idleQueue, { durable: false });
    const depth = async () => (await ch.checkQueue(idleQueue)).messageCount;
    const failure = rpc.call(contract('test.echo', idleQueue), {}, 1500).catch((err: unknown) => err);
    await eventually(async () => ((await depth()) === 1 ? true : undefined), 1500, 20);
    expect(await failure).toBeInstanceOf(DependencyUnavailableError);
    // Nobody consumes this queue: only the request's expiration (the caller's timeout) removes it.
    await eventually(async () => ((await depth()) === 0 ? true : undefined), 5000);
  });

  it('fails a call waiting for its answer as soon as its connection is lost, not at its timeout', async () => {
    const { proxy: path, url } = await proxiedAmqp();
    const metrics = new AppMetrics('rpc-test-lost');
    const own = new AmqpConnection(
      { url: asCrewApi(url), name: 'rpc-test-lost', prefetch: 5, minBackoffMs: 60_000 },
      createLogger('rpc-test', 'silent'),
    );
    own.start();
    await own.waitUntilConnected(10_000);
    const client = new RpcClient(own, { RPC_TIMEOUT_MS: 5000 }, metrics);
    try {
      await ch.assertQueue(idleQueue, { durable: false });
      await ch.purgeQueue(idleQueue);
      // Nobody answers this queue: only the lost connection can end the call before its timeout.
      const failure = client.call(contract('test.echo', idleQueue), {}, 60_000).catch((err: unknown) => err);
      await eventually(async () => ((await ch.checkQueue(idleQueue)).messageCount === 1 ? true : undefined));
      await path.cut();
      const err = await failure;
      expect(err).toBeInstanceOf(DependencyUnavailableError);
      expect(String((err as DependencyUnavailableError).cause)).toMatch(
        /closed the channel before the answer came/,
      );
      const outcomes = ['ok', 'error', 'timeout', 'unavailable'];
      const counts = await Promise.all(outcomes.map((o) => callCount(metrics, 'test.echo', o)));
      expect(Object.fromEntries(outcomes.map((o, k) => [o, counts[k]]))).toEqual({
        ok: 0,
        error: 0,
        timeout: 0,
        unavailable: 1,
      });
    } finally {
      await own.close();
      await path.stop();
      await ch.purgeQueue(idleQueue);
    }
  });

  it('answers again once the answering app has reconnected', async () => {
    await proxy.cut();
    await eventually(async () => (!server.get(AmqpConnection).isConnected() ? true : undefined));
    await proxy.restore();
    await server.get(AmqpConnection).waitUntilConnected(10_000);
    await expect(rpc.call(ECHO, { again: true })).resolves.toMatchObject({ got: { again: true } });
  });
});

describe('rpc_client_duration_seconds', () => {
  it('times every call by pattern and outcome: ok, error (answered), timeout, unavailable (broker lost)', async () => {
    const metrics = new AppMetrics('rpc-test-caller');
    const own = new AmqpConnection(
      { url: asCrewApi(services.amqpUrl), name: 'rpc-test-metrics', prefetch: 5 },
      createLogger('rpc-test', 'silent'),
    );
    own.start();
    const client = new RpcClient(own, { RPC_TIMEOUT_MS: 5000 }, metrics);
    const count = (pattern: string, outcome: string) => callCount(metrics, pattern, outcome);
    try {
      await client.call(ECHO, { n: 1 });
      // The pattern's other outcomes exist from its first call, at zero.
      expect(await count('test.echo', 'ok')).toBe(1);
      expect(await count('test.echo', 'timeout')).toBe(0);
      expect(await count('test.echo', 'unavailable')).toBe(0);

      await client.call(contract('test.refuse'), {}).catch(() => undefined);
      expect(await count('test.refuse', 'error')).toBe(1);

      await ch.assertQueue(idleQueue, { durable: false });
      await client.call(contract('test.echo', idleQueue), {}, 300).catch(() => undefined);
      expect(await count('test.echo', 'timeout')).toBe(1);
    } finally {
      await own.close();
    }
    const lost = await client.call(ECHO, { n: 2 }).catch((err: unknown) => err);
    expect(lost).toBeInstanceOf(DependencyUnavailableError);
    expect(await count('test.echo', 'unavailable')).toBe(1);
    expect(await count('test.echo', 'ok')).toBe(1);
  });
});
