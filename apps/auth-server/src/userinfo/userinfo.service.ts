import { AccessReadsRecorder } from '@svc/platform';
import type { UserinfoResponse } from '@svc/contracts';
import { Injectable } from '@nestjs/common';
import { type Principal } from '@svc/security';
import { UsersRepository } from '../users/users.repository';

/** OIDC-style basic profile (OpenID Connect Core §5.3.2); docs/rules.md decides the fields. */

@Injectable()
export class UserinfoService {
  constructor(
    private readonly users: UsersRepository,
    private readonly reads: AccessReadsRecorder,
  ) {}

  async describe(principal: Principal): Promise<UserinfoResponse> {
    if (!principal.scopes.includes('profile:read')) return { sub: principal.user_id };
    const user = await this.users.findById(principal.user_id);
    if (!user) return { sub: principal.user_id };
    // A read of the member's profile, counted under the scope that let it through. Without
    // profile:read the answer is the `sub` the partner already holds: nothing of the record.
    this.reads.count(principal, 'profile:read');
    // The photo belongs to the crew record (crew-api); auth-server knows only the sign-in identity.
    return {
      sub: user.userId,
      name: user.name,
      picture: null,
      updated_at: Math.floor(user.updatedAt.getTime() / 1000),
    };
  }
}
