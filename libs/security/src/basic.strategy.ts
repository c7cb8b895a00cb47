import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy as PassportBasicStrategy } from 'passport-http';
import { headerOnly, type HeaderOnlyRequest } from './bearer.strategy';
import type { PartnerPrincipal } from './partner-principal';
import type { PartnerVerifier } from './partner-verifier';

export const PARTNERS_REALM = 'partners';

/** What BasicAuthGuard hands the strategy through passport's authenticate options. */
export interface BasicAuthenticateOptions {
  readonly verifier?: PartnerVerifier;
}

/** passport-strategy's actions, which its typings leave out. */
interface PassportActions {
  fail(challenge: string, status: number): void;
}

/**
 * The credentials part of `Basic <base64>` must be exactly one `client_id:client_secret` pair:
 * passport-http splits at every colon and would take `secret:anything` for `secret`, and accepts
 * any scheme that merely contains "basic". Issued ids and secrets never contain a colon.
 */
export function isWellFormedBasic(authorization: string): boolean {
  const m = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(authorization.trim());
  if (!m) return false;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  return decoded.split(':').length === 2;
}

/**
 * passport-http's Basic strategy as `basic`: `client_id:client_secret` (docs/rules.md,
 * Authentication). Stateless like BearerStrategy.
 */
@Injectable()
export class BasicStrategy extends PassportStrategy(PassportBasicStrategy, 'basic') {
  constructor() {
    super({ passReqToCallback: true, realm: PARTNERS_REALM });
  }

  override authenticate(
    request: { headers?: { authorization?: string } },
    options?: BasicAuthenticateOptions,
  ): void {
    const authorization = request.headers?.authorization;
    const view = headerOnly(authorization?.trim(), options?.verifier, 'BasicAuthGuard');
    if (authorization !== undefined && !isWellFormedBasic(authorization)) {
      (this as unknown as PassportActions).fail(`Basic realm="${PARTNERS_REALM}"`, 401);
      return;
    }
    super.authenticate(view, options);
  }

  /** passport's verify callback: the partner, or false for "not these credentials". */
  async validate(
    request: HeaderOnlyRequest<PartnerVerifier>,
    clientId: string,
    secret: string,
  ): Promise<PartnerPrincipal | false> {
    return (await request.checker.verify(clientId, secret)) ?? false;
  }
}
