import type { DynamicModule, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { IntrospectResponse } from '@svc/contracts';
import {
  BASE_CONFIG,
  createHttpApp,
  createLogger,
  loadConfig,
  PlatformModule,
  RedisModule,
  RouteIndex,
  sha256Hex,
  type PlatformOptions,
} from '@svc/platform';
import type { Logger } from 'pino';
import { SecurityModule, type Introspector } from '@svc/security';
import { randomBytes } from 'node:crypto';
import { eventually } from './services';

/**
 * Boots a module the way every app boots (createHttpApp: request ids, Problem filter, parsers)
 * on a free port, for tests that need the real HTTP stack around a test controller.
 */
export async function startHttpApp(
  name: string,
  build: (platform: PlatformOptions) => DynamicModule,
  extraConfig: object = {},
  logger: Logger = createLogger(name, 'silent'),
): Promise<{ app: NestFastifyApplication; url: string }> {
  const base = loadConfig(BASE_CONFIG, {
    PORT: '1',
    METRICS_PORT: '0',
    DOCS_URL: 'https://docs.test/docs',
    APP_ENV: 'sandbox',
  });
  const config = { ...base, ...extraConfig };
  const routes = new RouteIndex();
  const options = { app: name, logger, routes, config };
  const app = await createHttpApp(build({ app: name, config, logger, routes }), options);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: await app.getUrl() };
}

/**
 * The Redis specs' stand-in for auth-server: a table of introspection answers the test controls
 * (an unknown digest is inactive), with every digest it was asked for.
 */
export class StandInIntrospector implements Introspector {
  readonly answers = new Map<string, IntrospectResponse>();
  readonly asked: string[] = [];

  readonly introspect = async (digest: string): Promise<IntrospectResponse> => {
    this.asked.push(digest);
    return this.answers.get(digest) ?? { active: false };
  };

  timesAsked(digest: string): number {
    return this.asked.filter((d) => d === digest).length;
  }

  /** A live token of `clientId` (a partner of its own unless named) for an hour. */
  issue(clientId = `partner-${randomBytes(6).toString('hex')}`, scopes = ['profile:read']) {
    const token = `at_${randomBytes(32).toString('base64url')}`;
    const digest = sha256Hex(token);
    this.answers.set(digest, {
      active: true,
      user_id: `usr_${randomBytes(8).toString('hex')}`,
      client_id: clientId,
      scopes,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    return { token, digest, clientId };
  }
}

/**
 * An app wired the way crew-api is (PlatformModule, RedisModule, SecurityModule with `introspector`)
 * around the spec's own modules of `@BearerAuth()` routes, on `config` (the Redis and rate-limit
 * variables, validated as the app validates them).
 */
export function startBearerProbe(introspector: Introspector, modules: Type[], config: object) {
  return startHttpApp(
    'crew-api',
    (platform) => ({
      module: class BearerProbeRoot {},
      imports: [
        PlatformModule.forRoot(platform),
        RedisModule.forRoot(),
        SecurityModule.forRoot({ introspector: { useValue: introspector } }),
        ...modules,
      ],
    }),
    config,
  );
}

/** Until its connection is up, a Redis client's commands fail (no offline queue): wait for it. */
export async function redisReady<R extends { readonly status: string }>(redis: R): Promise<R> {
  await eventually(async () => (redis.status === 'ready' ? true : undefined));
  return redis;
}
