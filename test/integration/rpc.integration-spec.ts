import { Controller, Get, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AUTH_PING, RPC_QUEUES } from '@svc/contracts';
import {
  AMQP_CONFIG,
  connectRpcServer,
  createHttpApp,
  createLogger,
  loadConfig,
  PlatformModule,
  RouteIndex,
  RpcClient,
  RpcModule,
  rootModule,
} from '@svc/platform';
import { AUTH_SERVER } from '../../apps/auth-server/src/app.definition';
import { AUTH_SERVER_CONFIG } from '../../apps/auth-server/src/config';
import { startHttpApp } from '../support/http-app';
import { testServices } from '../support/services';
import { appBrokerUrl } from '../../scripts/lib/credentials.cjs';

/**
 * One app asking another over RabbitMQ: crew-api's side is a probe controller on the platform's
 * RpcClient; auth-server is the real app definition with its real `auth.ping` handler.
 */
const services = testServices();
const RPC_TIMEOUT_MS = 1000;

@Controller('probe')
class AuthProbeController {
  constructor(private readonly rpc: RpcClient) {}

  @Get('auth-server')
  ask() {
    return this.rpc.call(AUTH_PING, { from: 'crew-api' });
  }
}

@Module({ controllers: [AuthProbeController] })
class AuthProbeModule {}

let caller: { app: NestFastifyApplication; url: string };
let authServer: NestFastifyApplication | undefined;

async function startAuthServer(): Promise<NestFastifyApplication> {
  const config = loadConfig(AUTH_SERVER_CONFIG, {
    PORT: '1',
    APP_ENV: 'sandbox',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    AMQP_URL: services.amqpUrl,
  });
  const logger = createLogger('auth-server', 'silent');
  const routes = new RouteIndex();
  const app = await createHttpApp(rootModule(AUTH_SERVER, { app: 'auth-server', config, logger, routes }), {
    app: 'auth-server',
    logger,
    routes,
    config,
  });
  connectRpcServer(app, config, RPC_QUEUES.authServer);
  await app.startAllMicroservices();
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

beforeAll(async () => {
  const amqp = loadConfig(AMQP_CONFIG, {
    // The sandbox's published broker passwords are refused in production.
    APP_ENV: 'sandbox',
    // As crew-api's own broker user: auth-server answers auth.ping to the apps it names.
    AMQP_URL: appBrokerUrl('crew-api', services.amqpUrl),
    RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
  });
  caller = await startHttpApp(
    'crew-api',
    (platform) => ({
      module: class CallerRoot {},
      imports: [PlatformModule.forRoot(platform), RpcModule, AuthProbeModule],
    }),
    amqp,
  );
});

afterAll(async () => {
  await authServer?.close();
  await caller.app.close();
});

describe('RPC over RabbitMQ', () => {
  it('gets auth-server’s answer to auth.ping', async () => {
    authServer = await startAuthServer();
    const response = await fetch(`${caller.url}/probe/auth-server`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { app: string; from: string; at: string };
    expect(body.app).toBe('auth-server');
    expect(body.from).toBe('crew-api');
    expect(Number.isNaN(Date.parse(body.at))).toBe(false);
  });

  it('answers 503 service_unavailable when auth-server does not answer in time, and recovers', async () => {
    await authServer?.close();
    authServer = undefined;
    const response = await fetch(`${caller.url}/probe/auth-server`);
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as { type: string; instance: string };
    expect(problem.type).toMatch(/\/errors\/service_unavailable$/);
    expect(problem.instance).toBe(response.headers.get('x-request-id'));

    authServer = await startAuthServer();
    const again = await fetch(`${caller.url}/probe/auth-server`);
    expect(again.status).toBe(200);
  });
});
