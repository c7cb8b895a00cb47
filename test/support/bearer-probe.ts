import type { Type } from '@nestjs/common';
import type { IntrospectResponse } from '@svc/contracts';
import { PlatformModule, RedisModule, sha256Hex } from '@svc/platform';
import { SecurityModule, type Introspector } from '@svc/security';
import { randomBytes } from 'node:crypto';
import { startHttpApp } from './http-app';
import { eventually } from './services';

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
