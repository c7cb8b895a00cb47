import { Injectable, Optional } from '@nestjs/common';
import type { LoginResponse } from '@svc/contracts';
import { AppMetrics } from '@svc/platform';
import type { Counter } from 'prom-client';
import { SignInThrottle } from './sign-in-throttle';
import { UsersService } from './users.service';

/** consent-ui's sign-in check: throttled first, then the password. */
@Injectable()
export class SignInService {
  private readonly outcomes?: Counter<'outcome'>;

  constructor(
    private readonly users: UsersService,
    private readonly throttle: SignInThrottle,
    @Optional() metrics?: AppMetrics,
  ) {
    // A rise of `refused` or `throttled` is guessing in progress.
    this.outcomes = metrics?.counter('signin_attempts_total', 'crew sign-in attempts by outcome', [
      'outcome',
    ]);
  }

  async signIn(email: string, password: string, clientIp: string | undefined): Promise<LoginResponse> {
    const attempt = await this.throttle.attempt(email, clientIp);
    if (!attempt.admitted) {
      this.outcomes?.inc({ outcome: 'throttled' });
      return { ok: false, retry_after_seconds: attempt.retryAfterSeconds };
    }
    const user = await this.users.verify(email, password, clientIp);
    if (!user) {
      this.outcomes?.inc({ outcome: 'refused' });
      return { ok: false };
    }
    await attempt.succeeded();
    this.outcomes?.inc({ outcome: 'signed_in' });
    return { ok: true, user_id: user.userId, email: user.email };
  }
}
