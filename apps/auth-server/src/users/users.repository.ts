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
}
