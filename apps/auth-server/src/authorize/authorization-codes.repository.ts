import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import type { AuthorizationCodeEntity } from './authorization-code.entity';

@Injectable()
export class AuthorizationCodesRepository {
  constructor(private readonly sql: Sql) {}

  async insert(
    tx: Transaction,
    code: Omit<AuthorizationCodeEntity, 'consumedAt' | 'createdAt'>,
  ): Promise<void> {
    await this.sql.rows(
      `INSERT INTO authorization_codes
         (code_digest, client_id, user_id, redirect_uri, scopes, code_challenge, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        code.codeDigest,
        code.clientId,
        code.userId,
        code.redirectUri,
        code.scopes,
        code.codeChallenge,
        code.expiresAt,
      ],
      tx,
    );
  }

  /** Locks the code so two exchanges of one code cannot both see it unconsumed. */
  lock(tx: Transaction, codeDigest: string): Promise<AuthorizationCodeEntity | null> {
    return this.sql.row<AuthorizationCodeEntity>(
      `SELECT code_digest AS "codeDigest", client_id AS "clientId", user_id AS "userId",
              redirect_uri AS "redirectUri", scopes, code_challenge AS "codeChallenge",
              expires_at AS "expiresAt", consumed_at AS "consumedAt", created_at AS "createdAt"
         FROM authorization_codes WHERE code_digest = $1 FOR UPDATE`,
      [codeDigest],
      tx,
    );
  }

  async markConsumed(tx: Transaction, codeDigest: string): Promise<void> {
    await this.sql.affected(
      `UPDATE authorization_codes SET consumed_at = now() WHERE code_digest = $1`,
      [codeDigest],
      tx,
    );
  }
}
