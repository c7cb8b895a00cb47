import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';
import type { UserEntity } from './user.entity';

const SELECT_USER = `SELECT user_id AS "userId", email, password_hash AS "passwordHash", name,
       created_at AS "createdAt", updated_at AS "updatedAt"
  FROM users`;

@Injectable()
export class UsersRepository {
  constructor(private readonly sql: Sql) {}

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.sql.row<UserEntity>(`${SELECT_USER} WHERE email = $1 LIMIT 1`, [email]);
  }

  findById(userId: string): Promise<UserEntity | null> {
    return this.sql.row<UserEntity>(`${SELECT_USER} WHERE user_id = $1 LIMIT 1`, [userId]);
  }

  /** Creates the member or updates name and password (sandbox seed, idempotent). */
  async upsert(user: Pick<UserEntity, 'userId' | 'email' | 'passwordHash' | 'name'>): Promise<void> {
    await this.sql.rows(
      `INSERT INTO users (user_id, email, password_hash, name) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id) DO UPDATE
         SET email = EXCLUDED.email, password_hash = EXCLUDED.password_hash, name = EXCLUDED.name`,
      [user.userId, user.email, user.passwordHash, user.name],
    );
  }

  /**
   * Stores a new hash of the same password, only while the row still holds `previous`. Resolves
   * with whether it was stored.
   */
  async replacePasswordHash(userId: string, previous: string, next: string): Promise<boolean> {
    const updated = await this.sql.affected(
      `UPDATE users SET password_hash = $3 WHERE user_id = $1 AND password_hash = $2`,
      [userId, previous, next],
    );
    return updated > 0;
  }
}
