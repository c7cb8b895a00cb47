import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { normaliseEmail } from '@svc/contracts';
import { APP_LOGGER } from '@svc/platform';
import type { Logger } from 'pino';
import { PasswordHasher } from '../crypto/secrets';
import type { UserEntity } from './user.entity';
import { UsersRepository } from './users.repository';

/** Members the sandbox seed hashes at once: the hashing slots' running count, never their queue. */
const SEED_CONCURRENCY = 2;

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
   * Checks a crew member's password. An unknown e-mail spends the same scrypt time as a wrong
   * password (the dummy hash has the current parameters).
   *
   * A right password whose stored hash has weaker parameters than the current ones is hashed
   * again and stored, after the answer: the member does not wait for a second hash, and only a
   * successful sign-in knows the password to do it with (a failed one never touches the row).
   */
  async verify(email: string, password: string, clientIp?: string): Promise<UserEntity | undefined> {
    const user = await this.users.findByEmail(normaliseEmail(email));
    const ok = await this.hasher.verify(password, user?.passwordHash ?? this.hasher.dummyHash, clientIp);
    if (!user || !ok) return undefined;
    if (this.hasher.needsRehash(user.passwordHash)) this.upgrade(user, password, clientIp);
    return user;
  }

  /** Resolves once every upgrade started so far has been stored (or given up). */
  async upgradesSettled(): Promise<void> {
    await Promise.all([...this.upgrades]);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.upgradesSettled();
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

  findById(userId: string): Promise<UserEntity | null> {
    return this.users.findById(userId);
  }

  /** The sandbox members, a few at a time (each hash holds a slot and 128 MiB). */
  async seedAll(members: readonly { userId: string; email: string; name: string; password: string }[]) {
    const queue = [...members];
    await Promise.all(
      Array.from({ length: SEED_CONCURRENCY }, async () => {
        for (let m = queue.shift(); m; m = queue.shift())
          await this.seed(m.userId, m.email, m.name, m.password);
      }),
    );
  }

  async seed(userId: string, email: string, name: string, password: string): Promise<void> {
    const existing = await this.users.findById(userId);
    // Keep an existing hash when the password is unchanged and its parameters are current:
    // seeding stays idempotent, and a sandbox hashed under an older cost is upgraded.
    if (
      existing &&
      existing.email === normaliseEmail(email) &&
      existing.name === name &&
      !this.hasher.needsRehash(existing.passwordHash) &&
      (await this.hasher.verify(password, existing.passwordHash))
    ) {
      return;
    }
    await this.users.upsert({
      userId,
      email: normaliseEmail(email),
      name,
      passwordHash: await this.hasher.hash(password),
    });
  }
}
