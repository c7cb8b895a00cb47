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
 * Header only: the strategy is shown the `Authorization` header and nothing else, so the
 * `access_token` query and form-body methods of RFC 6750 §2.2/§2.3 are never accepted. A token in
 * a URL ends up in logs, browser history and Referer headers (RFC 6750 §5.3; RFC 9700 and OAuth 2.1
 * drop the query method), and no partner needs either form.
 *
 * Stateless on purpose: passport's strategy registry is one per process, so the authenticator is
 * not captured here but passed per request by the app's own BearerAuthGuard. Two Nest apps in one
 * process (tests; auth-server next to a resource app) each keep their own cache and introspector.
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
