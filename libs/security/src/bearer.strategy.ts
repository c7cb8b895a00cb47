import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy, type VerifyFunctionWithRequest } from 'passport-http-bearer';
import type { Principal } from './principal';
import type { TokenAuthenticator } from './token-authenticator';

/** What BearerAuthGuard hands the strategy through passport's authenticate options. */
export interface BearerAuthenticateOptions {
  readonly authenticator?: TokenAuthenticator;
}

/** The only part of the request the strategy gets to see. */
interface HeaderOnlyRequest {
  readonly headers: { readonly authorization?: string };
  readonly authenticator: TokenAuthenticator;
}

/**
 * passport-http-bearer, registered with passport as `bearer`.
 *
 * Header only: the `access_token` query and form-body methods of RFC 6750 §2.2/§2.3 are never
 * accepted, since a token in a URL ends up in logs, history and Referer headers (§5.3).
 *
 * Stateless: passport's strategy registry is one per process, so the authenticator comes per
 * request from each app's BearerAuthGuard (two Nest apps may share a process).
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor() {
    super({ passReqToCallback: true });
  }

  override authenticate(
    request: { headers?: { authorization?: string } },
    options?: BearerAuthenticateOptions,
  ): void {
    const authenticator = options?.authenticator;
    if (!authenticator) {
      throw new Error('the bearer strategy runs only behind BearerAuthGuard (no authenticator was passed)');
    }
    const authorization = request.headers?.authorization;
    const view: HeaderOnlyRequest = {
      headers: authorization === undefined ? {} : { authorization },
      authenticator,
    };
    super.authenticate(
      view as unknown as Parameters<Strategy<VerifyFunctionWithRequest>['authenticate']>[0],
      options,
    );
  }

  /** passport's verify callback: a Principal, or false for "not a live token". */
  async validate(request: HeaderOnlyRequest, token: string): Promise<Principal | false> {
    return (await request.authenticator.authenticate(token)) ?? false;
  }
}
