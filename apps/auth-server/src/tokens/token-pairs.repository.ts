import { Injectable } from '@nestjs/common';
import { returnedRows, TransactionRunner, type Transaction } from '@svc/platform';
import { TokenPairEntity } from './token-pair.entity';

export type RevocationReason = 'revoked' | 'rotated' | 'code_replayed' | 'disconnected' | 'partner_suspended';

@Injectable()
export class TokenPairsRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  async insert(
    tx: Transaction,
    pair: Omit<TokenPairEntity, 'createdAt' | 'revokedAt' | 'revokedReason'>,
  ): Promise<void> {
    await tx.insert(TokenPairEntity, pair);
  }

  findByAccessDigest(accessDigest: string): Promise<TokenPairEntity | null> {
    return this.transactions.outside.findOne(TokenPairEntity, { where: { accessDigest } });
  }

  findByRefreshDigest(tx: Transaction, refreshDigest: string): Promise<TokenPairEntity | null> {
    return tx.findOne(TokenPairEntity, { where: { refreshDigest } });
  }

  findByEitherDigest(tx: Transaction, digest: string): Promise<TokenPairEntity | null> {
    return tx.findOne(TokenPairEntity, { where: [{ accessDigest: digest }, { refreshDigest: digest }] });
  }

  /**
   * Revokes one pair if it is still live (and, for a rotation, its refresh token unexpired).
   * Concurrent callers queue on the row lock and re-check the condition, so exactly one wins.
   */
  async revokeIfLive(tx: Transaction, id: string, reason: RevocationReason): Promise<boolean> {
    const result: unknown = await tx.query(
      `UPDATE token_pairs SET revoked_at = now(), revoked_reason = $2
        WHERE id = $1 AND revoked_at IS NULL AND refresh_expires_at > now()
        RETURNING id`,
      [id, reason],
    );
    return returnedRows(result).length > 0;
  }

  /** Revokes every live pair matching the filter; returns the access digests to tombstone. */
  async revokeLive(
    tx: Transaction,
    filter:
      | { pairId: string }
      | { codeDigest: string }
      | { userId: string; clientId: string }
      | { clientId: string },
    reason: RevocationReason,
  ): Promise<string[]> {
    const [where, params] =
      'pairId' in filter
        ? ['id = $2', [filter.pairId]]
        : 'codeDigest' in filter
          ? ['code_digest = $2', [filter.codeDigest]]
          : 'userId' in filter
            ? ['user_id = $2 AND client_id = $3', [filter.userId, filter.clientId]]
            : ['client_id = $2', [filter.clientId]];
    const result: unknown = await tx.query(
      `UPDATE token_pairs SET revoked_at = now(), revoked_reason = $1
        WHERE ${where} AND revoked_at IS NULL
        RETURNING access_digest`,
      [reason, ...params],
    );
    return returnedRows<{ access_digest: string }>(result).map((r) => r.access_digest);
  }

  /** Access digests of every pair of a code, live or not (a replay must blank their cache too). */
  async accessDigestsOfCode(tx: Transaction, codeDigest: string): Promise<string[]> {
    const rows = await tx.find(TokenPairEntity, { where: { codeDigest }, select: { accessDigest: true } });
    return rows.map((r) => r.accessDigest);
  }
}
