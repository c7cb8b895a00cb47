import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRedis } from '@svc/platform';
import type Redis from 'ioredis';
import { bootApp, ISSUER, testAppEnv, useStarted } from './app-process';
import { AUTH_SERVER } from '../../../apps/auth-server/src/app.definition';
import { OAuthHttp } from '../oauth/oauth-http';
import { testServices } from '../services';
import { CallerRpc } from '../broker-users';

/**
 * auth-server booted in-process (bootApp) with its RPC queue, after its sandbox seed. Tests reach
 * it only over HTTP and through the RPC contracts of libs/contracts, the way consent-ui and the
 * resource apps do.
 */
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
  const { app, url } = await bootApp(AUTH_SERVER, testAppEnv('auth-server', services, env), true);
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

/** auth-server for the specs of one file (useStarted), with an OAuth client on it. */
export function useAuthServer(env: Readonly<Record<string, string>> = {}): {
  auth: AuthServerHarness;
  http: OAuthHttp;
} {
  return useStarted(async () => {
    const auth = await startAuthServer(env);
    return { auth, http: new OAuthHttp(auth.url), close: () => auth.close() };
  }, ['auth', 'http']);
}
