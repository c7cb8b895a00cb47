import { Injectable } from '@nestjs/common';
import { AUTH_INTROSPECT, type IntrospectResponse } from '@svc/contracts';
import { DependencyUnavailableError, RpcClient, RpcRemoteError } from '@svc/platform';

/**
 * The authority on whether a token is live. Resource apps ask auth-server over RPC
 * (RpcIntrospector, the default); auth-server answers its own `/oauth/userinfo` from its
 * database through SecurityModule.forRoot({ introspector }).
 *
 * Contract: resolves with auth-server's answer; rejects with DependencyUnavailableError when the
 * answer cannot be had (the request then fails closed with 503).
 */
export interface Introspector {
  introspect(tokenDigest: string): Promise<IntrospectResponse>;
}

/** Injection token of the app's Introspector. */
export const INTROSPECTOR = Symbol('INTROSPECTOR');

/** Asks auth-server (`auth.introspect` on its RPC queue); only the digest travels. */
@Injectable()
export class RpcIntrospector implements Introspector {
  constructor(private readonly rpc: RpcClient) {}

  async introspect(tokenDigest: string): Promise<IntrospectResponse> {
    try {
      return await this.rpc.call(AUTH_INTROSPECT, { token_digest: tokenDigest });
    } catch (err) {
      // auth-server answered with an error of its own (its database is down, say): no answer.
      if (err instanceof RpcRemoteError) throw new DependencyUnavailableError('auth-server', err);
      throw err;
    }
  }
}
