import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport';
import type { RequestCredentials } from './bearer-challenge';
import { isMetered, keepDecision } from './metering';
import type { Principal } from './principal';
import type { RateLimitDecision } from './rate-limit-decision';
import { RateLimiter } from './rate-limiter';
import { TokenAuthenticator } from './token-authenticator';

type BearerRequest = RequestCredentials & Parameters<typeof isMetered>[0];
type Verified = (err: unknown, user?: Principal | false) => void;

/**
 * `Authorization: Bearer <token>` and nothing else (RFC 6750 §2.1), parsed as passport-http-bearer
 * parses the header. Unlike passport-http-bearer, the `access_token` query and form-body methods
 * of §2.2/§2.3 are never read: a token in a URL ends up in logs, history and Referer headers
 * (§5.3), and a parameter sent alongside the header must not turn a good request into a failure.
 */
class HeaderBearerStrategy extends Strategy {
  constructor(private readonly verify: (request: BearerRequest, token: string, done: Verified) => void) {
    super();
  }

  override authenticate(request: BearerRequest): void {
    const parts = request.headers.authorization?.split(' ') ?? [];
    const token = parts.length === 2 && /^Bearer$/i.test(parts[0]) ? parts[1] : '';
    // Every failure is answered alike, from the request (BearerAuthGuard, unauthenticatedProblem).
    if (!token) return this.fail();
    this.verify(request, token, (err, user) => {
      if (err) this.error(err);
      else if (user) this.success(user);
      else this.fail();
    });
  }
}

/**
 * The bearer strategy, registered with passport as `bearer`. On a metered route the same Redis
 * call that checks the token counts the request (a revoked token's is not counted), for
 * RateLimitGuard to apply; this module's limiter is the one its RateLimitGuard counts with.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(HeaderBearerStrategy, 'bearer') {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly limiter: RateLimiter,
  ) {
    super();
  }

  /** A Principal, or false for "not a live token". */
  async validate(request: BearerRequest, token: string): Promise<Principal | false> {
    const metering = isMetered(request)
      ? {
          limiter: this.limiter,
          onDecision: (decision: RateLimitDecision) => keepDecision(request, decision),
        }
      : undefined;
    return (await this.authenticator.authenticate(token, metering)) ?? false;
  }
}
