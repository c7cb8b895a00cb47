import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@svc/platform';
import { UserEntity } from './user.entity';

@Injectable()
export class UsersRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.transactions.outside.findOne(UserEntity, { where: { email } });
  }

  findById(userId: string): Promise<UserEntity | null> {
    return this.transactions.outside.findOne(UserEntity, { where: { userId } });
  }

  /** Creates the member or updates name and password (sandbox seed, idempotent). */
  async upsert(user: Pick<UserEntity, 'userId' | 'email' | 'passwordHash' | 'name'>): Promise<void> {
    await this.transactions.outside
      .createQueryBuilder()
      .insert()
      .into(UserEntity)
      .values(user)
      .orUpdate(['email', 'password_hash', 'name'], ['user_id'])
      .execute();
  }

  /**
   * Stores a new hash of the same password, only while the row still holds `previous`. Resolves
   * with whether it was stored.
   */
  async replacePasswordHash(userId: string, previous: string, next: string): Promise<boolean> {
    const result = await this.transactions.outside
      .createQueryBuilder()
      .update(UserEntity)
      .set({ passwordHash: next })
      .where('user_id = :userId AND password_hash = :previous', { userId, previous })
      .execute();
    return (result.affected ?? 0) > 0;
  }
}
