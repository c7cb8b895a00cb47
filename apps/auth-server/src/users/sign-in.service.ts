import { Injectable } from '@nestjs/common';
import type { LoginResponse } from '@svc/contracts';
import { SignInThrottle } from './sign-in-throttle';
import { UsersService } from './users.service';

/** consent-ui's sign-in check: throttled first, then the password. */
@Injectable()
export class SignInService {
  constructor(
    private readonly users: UsersService,
    private readonly throttle: SignInThrottle,
  ) {}

  async signIn(email: string, password: string, clientIp: string | undefined): Promise<LoginResponse> {
    const attempt = await this.throttle.attempt(email, clientIp);
    if (!attempt.admitted) return { ok: false, retry_after_seconds: attempt.retryAfterSeconds };
    const user = await this.users.verify(email, password);
    if (!user) return { ok: false };
    await attempt.succeeded();
    return { ok: true, user_id: user.userId, email: user.email };
  }
}
