import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Strategy as AnyStrategy } from 'passport';
import { Strategy } from 'passport-http-bearer';
import type { Principal } from './principal';

/** Checks one bearer token (TokenAuthenticator, as the guard set it up for this request). */
export interface BearerChecker {
  authenticate(token: string): Promise<Principal | undefined>;
}

/** What BearerAuthGuard hands the strategy through passport's authenticate options. */
export interface BearerAuthenticateOptions {
  readonly authenticator?: BearerChecker;
}

/** The only part of the request a strategy gets to see, and the checker its guard passed. */
export interface HeaderOnlyRequest<T> {
  readonly headers: { readonly authorization?: string };
  readonly checker: T;
}

/**
 * Strategies are stateless: passport's strategy registry is one per process, so the checker comes
 * per request from each app's guard (two Nest apps may share a process).
 */
export function headerOnly<T>(
  authorization: string | undefined,
  checker: T | undefined,
  guard: string,
): Parameters<AnyStrategy['authenticate']>[0] {
  if (!checker) throw new Error(`this strategy runs only behind ${guard} (no checker was passed)`);
  const view: HeaderOnlyRequest<T> = {
    headers: authorization === undefined ? {} : { authorization },
    checker,
  };
  return view as unknown as Parameters<AnyStrategy['authenticate']>[0];
}

/**
 * passport-http-bearer, registered with passport as `bearer`.
 *
 * Header only: the `access_token` query and form-body methods of RFC 6750 §2.2/§2.3 are never
 * accepted, since a token in a URL ends up in logs, history and Referer headers (§5.3).
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
    super.authenticate(
      headerOnly(request.headers?.authorization, options?.authenticator, 'BearerAuthGuard'),
      options,
    );
  }

  /** passport's verify callback: a Principal, or false for "not a live token". */
  async validate(request: HeaderOnlyRequest<BearerChecker>, token: string): Promise<Principal | false> {
    return (await request.checker.authenticate(token)) ?? false;
  }
}
