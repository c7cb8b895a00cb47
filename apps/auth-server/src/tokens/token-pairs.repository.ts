import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import type { QueryResultRow } from 'pg';
import type { TokenPairEntity } from './token-pair.entity';

export type RevocationReason = 'revoked' | 'disconnected' | 'partner_suspended';

/** What is stored of a new pair besides its family, member, client and scopes. */
export type NewPair = Pick<
  TokenPairEntity,
  'id' | 'accessDigest' | 'refreshDigest' | 'accessExpiresAt' | 'refreshExpiresAt'
>;

/**
 * `transaction`: the call would have ended a token that the caller has not tombstoned, and changed
 * nothing; it must be made again inside a transaction that tombstones `ended` before COMMIT.
 */
export type ExchangeOutcome =
  | { outcome: 'issued'; scopes: string[] }
  | { outcome: 'replayed'; clientId: string; ended: string[] }
  | {
      outcome:
        | 'client'
        | 'unknown'
        | 'expired'
        | 'other_client'
        | 'redirect_uri'
        | 'pkce'
        | 'disconnected'
        | 'transaction';
    };

export interface CodeExchange {
  readonly codeDigest: string;
  readonly clientId: string;
  readonly secretDigest: string;
  readonly redirectUri: string;
  /** BASE64URL(SHA256(code_verifier)), compared with the code's challenge. */
  readonly codeChallenge: string;
  readonly next: NewPair;
}

/** What `token_refresh` answered (token-grants.sql says what each outcome means). */
export type RefreshOutcome =
  | { outcome: 'rotated' | 'reissued'; userId: string; scopes: string[]; ended: string[] }
  | { outcome: 'reused'; userId: string; ended: string[] }
  | { outcome: 'scope'; scopes: string[] }
  | { outcome: 'client' | 'unusable' | 'raced' | 'disconnected' | 'transaction' };

export interface RefreshRotation {
  readonly refreshDigest: string;
  readonly clientId: string;
  readonly secretDigest: string;
  /** The narrowed scopes asked for, or null to keep the granted ones. */
  readonly scopes: readonly string[] | null;
  /**
   * When the request arrived, by this process's monotonic clock (performance.now()): the call
   * sends how long it has been here since, and token_refresh judges the race by PostgreSQL's clock.
   */
  readonly arrivedAt: number;
  readonly raceWindowMs: number;
  readonly graceSeconds: number;
  readonly next: NewPair;
}

const TOKEN_EXCHANGE = `SELECT outcome, out_scopes AS scopes, out_client_id AS "clientId", ended
  FROM token_exchange($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

const TOKEN_REFRESH = `SELECT outcome, out_user_id AS "userId", out_scopes AS scopes, ended
  FROM token_refresh($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

const TOKEN_REFRESH_BATCH = `SELECT outcome, out_user_id AS "userId", out_scopes AS scopes, ended
  FROM token_refresh_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
  ORDER BY ord`;

/** How long the rotation's request has been in this process, until now (its statement is sent). */
const waitedMs = (rotation: RefreshRotation) => Math.max(0, performance.now() - rotation.arrivedAt);

/** lock_not_available (the batch's lock_timeout) and deadlock_detected: the batch rolled back whole. */
const GAVE_WAY = new Set(['55P03', '40P01']);

/** A rotation without a narrowing whose presented pair's access token the caller tombstoned. */
export interface TombstonedRotation {
  readonly rotation: RefreshRotation;
  readonly tombstoned: string;
}

/**
 * A partner's ($2) or a member's ($2, $3) live pairs, revoked for reason $1. Only a family's newest
 * pair can be live, so each family costs one probe of the (code_digest, generation) index, however
 * often it was rotated, and the pairs found are updated by primary key.
 */
function revokeLiveOfFamilies(byMember: boolean): string {
  return `UPDATE token_pairs t SET revoked_at = now(), revoked_reason = $1
   WHERE t.id = ANY (ARRAY(
           SELECT newest.id FROM token_families f
            CROSS JOIN LATERAL (
              SELECT n.id FROM token_pairs n WHERE n.code_digest = f.code_digest
               ORDER BY n.generation DESC LIMIT 1
            ) newest
            WHERE f.client_id = $2${byMember ? ' AND f.user_id = $3' : ''}))
     AND t.revoked_at IS NULL
   RETURNING t.access_digest AS "accessDigest"`;
}

export const REVOKE_LIVE_OF_PARTNER = revokeLiveOfFamilies(false);
export const REVOKE_LIVE_OF_MEMBER = revokeLiveOfFamilies(true);

/**
 * Token pairs. The two grants are one SQL function each (token-grants.sql), which hold their rules; this repository only calls them, in autocommit (one round trip, a prepared
 * statement) or inside the caller's transaction.
 */
@Injectable()
export class TokenPairsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * `token_exchange`. Without `tx` it may not revoke (autocommit: nothing is tombstoned), and a
   * replay that would answers `transaction`; inside `tx` it revokes and answers what it ended.
   */
  async exchangeCode(exchange: CodeExchange, tx?: Transaction): Promise<ExchangeOutcome> {
    const values = [
      exchange.codeDigest,
      exchange.clientId,
      exchange.secretDigest,
      exchange.redirectUri,
      exchange.codeChallenge,
      tx !== undefined,
      exchange.next.id,
      exchange.next.accessDigest,
      exchange.next.refreshDigest,
      exchange.next.accessExpiresAt,
      exchange.next.refreshExpiresAt,
    ];
    const [row] = tx
      ? await this.sql.rows<ExchangeOutcome & QueryResultRow>(TOKEN_EXCHANGE, values, tx)
      : await this.sql.prepared<ExchangeOutcome & QueryResultRow>('token_exchange', TOKEN_EXCHANGE, values);
    return row;
  }

  /**
   * `token_refresh`. Without `tx`, `tombstoned` is the access digest the caller tombstoned already,
   * and a call that would end any other answers `transaction`; inside `tx` it may end any, and
   * answers what it ended.
   */
  async refresh(
    rotation: RefreshRotation,
    where: { tombstoned: string } | { tx: Transaction },
  ): Promise<RefreshOutcome> {
    const values = [
      rotation.refreshDigest,
      rotation.clientId,
      rotation.secretDigest,
      rotation.scopes,
      'tombstoned' in where ? where.tombstoned : null,
      waitedMs(rotation),
      rotation.raceWindowMs,
      rotation.graceSeconds,
      rotation.next.id,
      rotation.next.accessDigest,
      rotation.next.refreshDigest,
      rotation.next.accessExpiresAt,
      rotation.next.refreshExpiresAt,
    ];
    const [row] =
      'tx' in where
        ? await this.sql.rows<RefreshOutcome & QueryResultRow>(TOKEN_REFRESH, values, where.tx)
        : await this.sql.prepared<RefreshOutcome & QueryResultRow>('token_refresh', TOKEN_REFRESH, values);
    return row;
  }

  /**
   * `refresh` in autocommit for several rotations in one statement and one transaction (group
   * commit), each answered as alone after the ones before it, in this order. A batch that gave way
   * to a lock changed nothing and answers undefined for each: its caller sends each alone.
   */
  async refreshBatch(batch: readonly TombstonedRotation[]): Promise<(RefreshOutcome | undefined)[]> {
    const column = <T>(pick: (r: RefreshRotation) => T) => batch.map((b) => pick(b.rotation));
    const first = batch[0].rotation;
    try {
      const rows = await this.sql.prepared<RefreshOutcome & QueryResultRow>(
        'token_refresh_batch',
        TOKEN_REFRESH_BATCH,
        [
          column((r) => r.refreshDigest),
          column((r) => r.clientId),
          column((r) => r.secretDigest),
          batch.map((b) => b.tombstoned),
          column(waitedMs),
          first.raceWindowMs,
          first.graceSeconds,
          column((r) => r.next.id),
          column((r) => r.next.accessDigest),
          column((r) => r.next.refreshDigest),
          column((r) => r.next.accessExpiresAt),
          column((r) => r.next.refreshExpiresAt),
        ],
      );
      // Committed, so never sent again: a short answer fails its calls rather than grant twice.
      if (rows.length !== batch.length) {
        throw new Error(`token_refresh_batch answered ${rows.length} rows for ${batch.length}`);
      }
      return rows;
    } catch (err) {
      if (!GAVE_WAY.has((err as { code?: unknown }).code as string)) throw err;
      return batch.map(() => undefined);
    }
  }

  findByAccessDigest(accessDigest: string): Promise<TokenPairEntity | null> {
    return this.sql.row<TokenPairEntity>(
      `SELECT id, code_digest AS "codeDigest", user_id AS "userId", client_id AS "clientId", scopes,
              access_digest AS "accessDigest", refresh_digest AS "refreshDigest",
              access_expires_at AS "accessExpiresAt", refresh_expires_at AS "refreshExpiresAt",
              created_at AS "createdAt", revoked_at AS "revokedAt", revoked_reason AS "revokedReason",
              replaced_by AS "replacedBy"
         FROM token_pairs WHERE access_digest = $1`,
      [accessDigest],
    );
  }

  /**
   * RFC 7009 §2.1: the family of the pair whose access or refresh token is `digest`, if `clientId`'s,
   * revoked under its family lock; the access digests it ended (at most the family's live pair).
   */
  async revokeFamilyOf(tx: Transaction, digest: string, clientId: string): Promise<string[]> {
    const family = await this.sql.row<{ codeDigest: string }>(
      `SELECT code_digest AS "codeDigest" FROM token_pairs
        WHERE (access_digest = $1 OR refresh_digest = $1) AND client_id = $2 LIMIT 1`,
      [digest, clientId],
      tx,
    );
    if (!family) return [];
    await this.sql.rows(
      `SELECT pg_advisory_xact_lock(hashtextextended('token_family:' || $1, 0))`,
      [family.codeDigest],
      tx,
    );
    const [row] = await this.sql.rows<{ ended: string[] }>(
      `SELECT revoke_family($1, 'revoked') AS ended`,
      [family.codeDigest],
      tx,
    );
    return row.ended;
  }

  /**
   * Holds the partner's lock exclusively until the transaction ends: every grant in flight for it
   * (they hold it shared) has committed, and later ones wait, then see what this transaction did.
   */
  async lockPartner(tx: Transaction, clientId: string): Promise<void> {
    await this.sql.rows(
      `SELECT pg_advisory_xact_lock(hashtextextended('partner:' || $1, 0))`,
      [clientId],
      tx,
    );
  }

  /** Revokes a partner's or a member's live pairs; returns the access digests to tombstone. */
  async revokeLive(
    tx: Transaction,
    filter: { userId: string; clientId: string } | { clientId: string },
    reason: RevocationReason,
  ): Promise<string[]> {
    const [statement, params] =
      'userId' in filter
        ? [REVOKE_LIVE_OF_MEMBER, [filter.clientId, filter.userId]]
        : [REVOKE_LIVE_OF_PARTNER, [filter.clientId]];
    const rows = await this.sql.rows<Pick<TokenPairEntity, 'accessDigest'>>(
      statement,
      [reason, ...params],
      tx,
    );
    return rows.map((r) => r.accessDigest);
  }
}
