import { Injectable } from '@nestjs/common';
import { normaliseEmail } from '@svc/contracts';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../crypto/secrets';
import type { UserEntity } from './user.entity';
import { UsersRepository } from './users.repository';

@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  /** Checks a crew member's password. An unknown e-mail spends the same scrypt time as a wrong password. */
  async verify(email: string, password: string, clientIp?: string): Promise<UserEntity | undefined> {
    const user = await this.users.findByEmail(normaliseEmail(email));
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH, clientIp);
    return user && ok ? user : undefined;
  }

  findById(userId: string): Promise<UserEntity | null> {
    return this.users.findById(userId);
  }

  async seed(userId: string, email: string, name: string, password: string): Promise<void> {
    const existing = await this.users.findById(userId);
    // Keep an existing hash when the password is unchanged: seeding stays cheap and idempotent.
    if (
      existing &&
      existing.email === normaliseEmail(email) &&
      existing.name === name &&
      (await verifyPassword(password, existing.passwordHash))
    ) {
      return;
    }
    await this.users.upsert({
      userId,
      email: normaliseEmail(email),
      name,
      passwordHash: await hashPassword(password),
    });
  }
}
