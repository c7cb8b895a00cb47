import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { normaliseEmail } from '@svc/contracts';
import { APP_LOGGER } from '@svc/platform';
import type { Logger } from 'pino';
import { PasswordHasher } from '../crypto/secrets';
import type { UserEntity } from './user.entity';
import { UsersRepository } from './users.repository';

@Injectable()
export class UsersService implements OnApplicationShutdown {
  /** Upgrades of stored hashes still running (see `verify`). */
  private readonly upgrades = new Set<Promise<void>>();

  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * An unknown e-mail spends the same scrypt time as a wrong password. A right password under
   * weaker parameters is hashed again after the answer: only a successful sign-in knows it.
   */
  async verify(email: string, password: string, clientIp?: string): Promise<UserEntity | undefined> {
    const user = await this.users.findByEmail(normaliseEmail(email));
    const ok = await this.hasher.verify(password, user?.passwordHash ?? this.hasher.dummyHash, clientIp);
    if (!user || !ok) return undefined;
    if (this.hasher.needsRehash(user.passwordHash)) this.upgrade(user, password, clientIp);
    return user;
  }

  /** Resolves once every upgrade started so far has been stored (or given up). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.upgrades]);
  }

  private upgrade(user: UserEntity, password: string, clientIp: string | undefined): void {
    const done = (async () => {
      try {
        const hash = await this.hasher.hash(password, clientIp);
        // Only over the hash that was checked: a password changed meanwhile stays changed.
        await this.users.replacePasswordHash(user.userId, user.passwordHash, hash);
      } catch (err) {
        // Busy hashing slots or a database hiccup: the next successful sign-in tries again.
        this.logger.warn(
          { err: err instanceof Error ? err.message : String(err), user_id: user.userId },
          'password hash upgrade skipped',
        );
      }
    })();
    this.upgrades.add(done);
    void done.finally(() => this.upgrades.delete(done));
  }

  /**
   * The sandbox members share one published password, so one hash serves them all (a salt protects
   * nothing when the password is public). Idempotent: a current row is left alone.
   */
  async seedAll(
    members: readonly { userId: string; email: string; name: string; password: string }[],
  ): Promise<void> {
    const checks = new Map<string, Promise<boolean>>();
    const hashes = new Map<string, Promise<string>>();
    for (const m of members) {
      const email = normaliseEmail(m.email);
      const existing = await this.users.findById(m.userId);
      if (
        existing?.email === email &&
        existing.name === m.name &&
        !this.hasher.needsRehash(existing.passwordHash)
      ) {
        const key = `${m.password}\u0000${existing.passwordHash}`;
        if (!checks.has(key)) checks.set(key, this.hasher.verify(m.password, existing.passwordHash));
        if (await checks.get(key)) continue;
      }
      if (!hashes.has(m.password)) hashes.set(m.password, this.hasher.hash(m.password));
      const passwordHash = await hashes.get(m.password)!;
      await this.users.upsert({ userId: m.userId, email, name: m.name, passwordHash });
    }
  }
}
