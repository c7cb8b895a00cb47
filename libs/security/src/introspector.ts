import { Injectable } from '@nestjs/common';
import { AUTH_INTROSPECT, type IntrospectResponse, type RpcContract } from '@svc/contracts';
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

/**
 * An auth-server question whose only acceptable answers are auth-server's own: when it answers with
 * an error of its own (its database is down, say) there is no answer, and the request fails closed.
 */
export async function askAuthServer<Req, Res>(
  rpc: RpcClient,
  contract: RpcContract<Req, Res>,
  payload: Req,
): Promise<Res> {
  try {
    return await rpc.call(contract, payload);
  } catch (err) {
    if (err instanceof RpcRemoteError) throw new DependencyUnavailableError('auth-server', err);
    throw err;
  }
}

/** Asks auth-server (`auth.introspect` on its RPC queue); only the digest travels. */
@Injectable()
export class RpcIntrospector implements Introspector {
  constructor(private readonly rpc: RpcClient) {}

  introspect(tokenDigest: string): Promise<IntrospectResponse> {
    return askAuthServer(this.rpc, AUTH_INTROSPECT, { token_digest: tokenDigest });
  }
}
