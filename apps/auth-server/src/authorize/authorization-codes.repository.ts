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
}
