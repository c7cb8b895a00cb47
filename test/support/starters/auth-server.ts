import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLogger, createRedis, loadConfig } from '@svc/platform';
import type Redis from 'ioredis';
import { bootApp } from './app-process';
import { AUTH_SERVER } from '../../../apps/auth-server/src/app.definition';
import { OAuthHttp } from '../oauth/oauth-http';
import { testServices } from '../services';
import { brokerUrlOf, CallerRpc } from '../broker-users';

/**
 * auth-server booted in-process exactly as `serveApp` boots it (its real root module, form bodies,
 * error mapping and RPC queue), on a free port, after its sandbox seed. Tests reach it only over
 * HTTP and through the RPC contracts of libs/contracts, the way consent-ui and the resource apps
 * do.
 */
export const ISSUER = 'http://oauth-it.localhost:8080';

export interface AuthServerHarness {
  /** The app's own base URL (no gateway in front), e.g. http://127.0.0.1:41234. */
  readonly url: string;
  /** PUBLIC_BASE_URL: the issuer (RFC 8414) and the `iss` of authorization responses (RFC 9207). */
  readonly issuer: string;
  /**
   * The callers' side of RabbitMQ RPC: each contract asked as the app it names (consent-ui,
   * crew-api, ...) on that app's own broker user, as the app itself asks.
   */
  readonly rpc: CallerRpc;
  /** This run's Redis, with its key prefix (the introspection cache lives there). */
  readonly redis: Redis;
  readonly services: ReturnType<typeof testServices>;
  /** The app itself, for tests that arrange state through its services. */
  readonly app: NestFastifyApplication;
  close(): Promise<void>;
}

export async function startAuthServer(
  env: Readonly<Record<string, string>> = {},
): Promise<AuthServerHarness> {
  // A test file on a vhost of its own (AMQP_URL in env) reaches auth-server there, as do its helpers.
  const services = { ...testServices(), ...(env.AMQP_URL ? { amqpUrl: env.AMQP_URL } : {}) };
  const config = loadConfig(AUTH_SERVER.config, {
    PORT: '1',
    // Several apps share the test process: each gets a free metrics port (metricsUrl finds it).
    METRICS_PORT: '0',
    APP_ENV: 'sandbox',
    PUBLIC_BASE_URL: ISSUER,
    DOCS_URL: `${ISSUER}/docs`,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    LOG_LEVEL: 'silent',
    // As the test system (test/support/system.ts): scrypt at 2^14, production's 2^17 is for members.
    PASSWORD_HASH_COST: process.env.PASSWORD_HASH_COST || '14',
    ...env,
    // As its own broker user, on the vhost or broker `env` names (the RPC callers check it).
    AMQP_URL: brokerUrlOf('auth-server', services.amqpUrl),
  });
  const logger = createLogger('auth-server', process.env.OAUTH_TEST_LOG_LEVEL ?? 'silent');
  if (!AUTH_SERVER.seed) throw new Error('auth-server has no sandbox seed (AUTH_SERVER.seed)');
  // Idempotent (docs/rules.md, Sandbox): every spec file seeds, in any order.
  await AUTH_SERVER.seed(config, logger);

  const { app, url } = await bootApp(AUTH_SERVER, config, logger, true);

  const rpc = new CallerRpc(services.amqpUrl);
  const redis = createRedis({ REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: services.redisKeyPrefix });
  redis.on('error', () => undefined);

  return {
    url,
    issuer: ISSUER,
    rpc,
    redis,
    services,
    app,
    async close() {
      await rpc.close();
      await redis.quit().catch(() => redis.disconnect());
      await app.close();
    },
  };
}

/**
 * auth-server for the specs of one file: started in its beforeAll, closed in its afterAll, with
 * an OAuth client on it. The values stand in for what beforeAll creates, so specs can use them
 * at the top level without `let` and an assignment.
 */
export function useAuthServer(env: Readonly<Record<string, string>> = {}): {
  auth: AuthServerHarness;
  http: OAuthHttp;
} {
  let auth: AuthServerHarness | undefined;
  let http: OAuthHttp | undefined;
  beforeAll(async () => {
    auth = await startAuthServer(env);
    http = new OAuthHttp(auth.url);
  }, 60_000);
  afterAll(async () => {
    await auth?.close();
  });
  return { auth: startedLater(() => auth), http: startedLater(() => http) };
}

/** Reads through to the value `current` returns once beforeAll has set it. */
export function startedLater<T extends object>(current: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const value = current();
      if (value === undefined) throw new Error(`read ${String(key)} before beforeAll started it`);
      const member: unknown = Reflect.get(value, key, value);
      return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(value) : member;
    },
  });
}
