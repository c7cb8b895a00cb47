import { Injectable } from '@nestjs/common';
import { AUTH_INTROSPECT, type IntrospectResponse, type RpcContract } from '@svc/contracts';
import { DependencyUnavailableError, RpcClient, RpcRemoteError } from '@svc/platform';

/**
 * Whether a token is live: resource apps ask auth-server over RPC, auth-server its own database.
 * Rejects with DependencyUnavailableError when no answer can be had (503, fail closed).
 */
export abstract class Introspector {
  abstract introspect(tokenDigest: string): Promise<IntrospectResponse>;
}

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
