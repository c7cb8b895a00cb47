import { Injectable } from '@nestjs/common';
import { returnedRows, TransactionRunner, type Transaction } from '@svc/platform';
import { TokenPairEntity } from './token-pair.entity';

export type RevocationReason =
  | 'revoked'
  | 'rotated'
  | 'superseded'
  | 'reuse_detected'
  | 'code_replayed'
  | 'disconnected'
  | 'partner_suspended';

@Injectable()
export class TokenPairsRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  async insert(
    tx: Transaction,
    pair: Omit<TokenPairEntity, 'createdAt' | 'revokedAt' | 'revokedReason' | 'replacedBy'>,
  ): Promise<void> {
    await tx.insert(TokenPairEntity, pair);
  }

  findByAccessDigest(accessDigest: string): Promise<TokenPairEntity | null> {
    return this.transactions.outside.findOne(TokenPairEntity, { where: { accessDigest } });
  }

  findByRefreshDigest(tx: Transaction, refreshDigest: string): Promise<TokenPairEntity | null> {
    return tx.findOne(TokenPairEntity, { where: { refreshDigest } });
  }

  findById(tx: Transaction, id: string): Promise<TokenPairEntity | null> {
    return tx.findOne(TokenPairEntity, { where: { id } });
  }

  /**
   * Serialises everything that changes one family (the pairs of one authorization code) until the
   * transaction ends: rotations, re-issues, reuse and revocations. A family revocation taken after
   * this lock sees every pair a concurrent rotation inserted, so none survives it.
   */
  async lockFamily(tx: Transaction, codeDigest: string): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`token_family:${codeDigest}`]);
  }

  /**
   * Marks a pair, live until now, as rotated into `successorId`. `at` is the application clock's
   * time just before commit: a later request that arrived before it raced this rotation.
   */
  async markRotated(tx: Transaction, id: string, successorId: string, at: Date): Promise<void> {
    await tx.query(
      `UPDATE token_pairs SET revoked_at = $3, revoked_reason = 'rotated', replaced_by = $2 WHERE id = $1`,
      [id, successorId, at],
    );
  }

  findByEitherDigest(tx: Transaction, digest: string): Promise<TokenPairEntity | null> {
    return tx.findOne(TokenPairEntity, { where: [{ accessDigest: digest }, { refreshDigest: digest }] });
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
