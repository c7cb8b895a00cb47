import { createRedis } from '@svc/platform';
import { bootApp, ISSUER, testAppEnv, useStarted } from './app-process';
import { AUTH_SERVER } from '../../../apps/auth-server/src/app.definition';
import { OAuthHttp } from '../oauth/flow';
import { testServices } from '../services';
import { CallerRpc } from '../broker-users';

/**
 * auth-server booted in-process (bootApp) with its RPC queue, after its sandbox seed. Tests reach
 * it only over HTTP and through the RPC contracts of libs/contracts, the way consent-ui and the
 * resource apps do (`app`: for tests that arrange state through its services).
 */
export async function startAuthServer(env: Readonly<Record<string, string>> = {}) {
  // A test file on a vhost of its own (AMQP_URL in env) reaches auth-server there, as do its helpers.
  const services = { ...testServices(), ...(env.AMQP_URL ? { amqpUrl: env.AMQP_URL } : {}) };
  const { app, url, close } = await bootApp(AUTH_SERVER, testAppEnv('auth-server', services, env), true);
  // The callers' side of RPC: each contract asked as the app it names, on that app's broker user.
  const rpc = new CallerRpc(services.amqpUrl);
  // This run's Redis, with its key prefix (the introspection cache lives there).
  const redis = createRedis({ REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: services.redisKeyPrefix });
  redis.on('error', () => undefined);
  return {
    /** The app's own base URL (no gateway in front), e.g. http://127.0.0.1:41234. */
    url,
    /** PUBLIC_BASE_URL: the issuer (RFC 8414) and the `iss` of authorization responses (RFC 9207). */
    issuer: ISSUER,
    rpc,
    redis,
    services,
    app,
    async close() {
      await rpc.close();
      await redis.quit().catch(() => redis.disconnect());
      await close();
    },
  };
}

export type AuthServerHarness = Awaited<ReturnType<typeof startAuthServer>>;

/** auth-server for the specs of one file (useStarted), with an OAuth client on it. */
export function useAuthServer(env: Readonly<Record<string, string>> = {}) {
  return useStarted(async (keep) => {
    const auth = keep(await startAuthServer(env));
    return { auth, http: new OAuthHttp(auth.url) };
  });
}
