import { Injectable, Optional } from '@nestjs/common';
import { AppMetrics, Sql, type Transaction } from '@svc/platform';
import type { QueryResultRow } from 'pg';
import type { Counter } from 'prom-client';
import type { TokenPairEntity } from './token-pair.entity';

export type RevocationReason =
  | 'revoked'
  | 'rotated'
  | 'superseded'
  | 'reuse_detected'
  | 'code_replayed'
  | 'disconnected'
  | 'partner_suspended';

const SELECT_PAIR = `SELECT id, code_digest AS "codeDigest", user_id AS "userId", client_id AS "clientId", scopes,
       access_digest AS "accessDigest", refresh_digest AS "refreshDigest",
       access_expires_at AS "accessExpiresAt", refresh_expires_at AS "refreshExpiresAt",
       created_at AS "createdAt", revoked_at AS "revokedAt", revoked_reason AS "revokedReason",
       replaced_by AS "replacedBy"
  FROM token_pairs`;

/** What `token_refresh` answered (migration 1764500000000-tokenRefreshFunction). */
export type RefreshOutcome =
  | { outcome: 'rotated'; userId: string; scopes: string[]; endedAccessDigest: string }
  | { outcome: 'scope'; scopes: string[] }
  | { outcome: 'client' | 'unusable' | 'revoked' | 'disconnected' | 'unexpected' };

/** What is stored of a new pair besides its family, member, client and scopes. */
export type NewPair = Pick<
  TokenPairEntity,
  'id' | 'accessDigest' | 'refreshDigest' | 'accessExpiresAt' | 'refreshExpiresAt'
>;

/** What `token_exchange` answered (migration 1764500000001-tokenExchangeFunction). */
export type ExchangeOutcome =
  | { outcome: 'issued'; scopes: string[] }
  | {
      outcome:
        | 'client'
        | 'unknown'
        | 'replayed'
        | 'expired'
        | 'other_client'
        | 'redirect_uri'
        | 'pkce'
        | 'disconnected';
    };

export interface CodeExchange {
  readonly codeDigest: string;
  readonly clientId: string;
  readonly secretDigest: string;
  readonly redirectUri: string;
  /** BASE64URL(SHA256(code_verifier)), compared with the code's challenge. */
  readonly codeChallenge: string;
  readonly next: NewPair;
  readonly at: Date;
}

const TOKEN_EXCHANGE = `SELECT outcome, out_scopes AS scopes
  FROM token_exchange($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

const TOKEN_EXCHANGE_BATCH = `SELECT outcome, out_scopes AS scopes
  FROM token_exchange_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
  ORDER BY ord`;

export interface RefreshRotation {
  readonly refreshDigest: string;
  readonly clientId: string;
  readonly secretDigest: string;
  /** The narrowed scopes asked for, or null to keep the granted ones. */
  readonly scopes: readonly string[] | null;
  readonly next: Pick<
    TokenPairEntity,
    'id' | 'accessDigest' | 'refreshDigest' | 'accessExpiresAt' | 'refreshExpiresAt'
  >;
  /** The application clock's time of the rotation (compared with later requests' arrival). */
  readonly at: Date;
}

function refreshValues(rotation: RefreshRotation) {
  return [
    rotation.refreshDigest,
    rotation.clientId,
    rotation.secretDigest,
    rotation.scopes,
    rotation.next.id,
    rotation.next.accessDigest,
    rotation.next.refreshDigest,
    rotation.next.accessExpiresAt,
    rotation.next.refreshExpiresAt,
    rotation.at,
  ] as const;
}

interface RefreshRow extends QueryResultRow {
  outcome: string;
  userId: string | null;
  scopes: string[] | null;
  endedAccessDigest: string | null;
}

const TOKEN_REFRESH = `SELECT outcome, out_user_id AS "userId", out_scopes AS scopes,
       ended_access_digest AS "endedAccessDigest"
  FROM token_refresh($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

const TOKEN_REFRESH_BATCH = `SELECT outcome, out_user_id AS "userId", out_scopes AS scopes,
       ended_access_digest AS "endedAccessDigest"
  FROM token_refresh_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  ORDER BY ord`;

/**
 * A partner's ($2) or a member's ($2, $3) live pairs, revoked for reason $1. Only a family's newest
 * pair can be live, so each family costs one probe of the (code_digest, generation) index, however
 * often it was rotated (migration 1765300000000), and the pairs found are updated by primary key.
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

/** The live pairs that `where` ($2) finds, revoked for reason $1. */
function revokeLiveWhere(where: string): string {
  return `UPDATE token_pairs SET revoked_at = now(), revoked_reason = $1
   WHERE ${where} AND revoked_at IS NULL
   RETURNING access_digest AS "accessDigest"`;
}

export const REVOKE_LIVE_OF_PARTNER = revokeLiveOfFamilies(false);
export const REVOKE_LIVE_OF_MEMBER = revokeLiveOfFamilies(true);

/** lock_not_available (its lock_timeout) and deadlock_detected: the batch rolled back whole. */
const GAVE_WAY = new Set(['55P03', '40P01']);

type BatchOutcome = 'committed' | 'gave_way';

/**
 * A group commit's statements by outcome, and the items they carried: the mean batch, and how
 * often one gave way. Both start at 0 for each outcome, so rate() sees them from the first scrape.
 */
class BatchCounters {
  private readonly batches?: Counter<'outcome'>;
  private readonly items?: Counter<'outcome'>;

  constructor(
    metrics: AppMetrics | undefined,
    batches: { name: string; help: string },
    items: { name: string; help: string },
  ) {
    this.batches = metrics?.counter(batches.name, batches.help, ['outcome']);
    this.items = metrics?.counter(items.name, items.help, ['outcome']);
    for (const outcome of ['committed', 'gave_way'] satisfies BatchOutcome[]) {
      this.batches?.inc({ outcome }, 0);
      this.items?.inc({ outcome }, 0);
    }
  }

  count(outcome: BatchOutcome, items: number): void {
    this.batches?.inc({ outcome });
    this.items?.inc({ outcome }, items);
  }
}

/** A rotation of a pair whose access token is expected to be `expectedAccessDigest`. */
export interface ExpectedRotation {
  readonly rotation: RefreshRotation;
  readonly expectedAccessDigest: string;
}

@Injectable()
export class TokenPairsRepository {
  private readonly refreshBatches: BatchCounters;
  private readonly exchangeBatches: BatchCounters;

  constructor(
    private readonly sql: Sql,
    @Optional() metrics?: AppMetrics,
  ) {
    this.refreshBatches = new BatchCounters(
      metrics,
      {
        name: 'token_refresh_batches_total',
        help: 'token_refresh_batch statements (group commit of refreshes), by outcome: committed, or gave_way to a lock (each rotation then sent alone)',
      },
      {
        name: 'token_refresh_batched_rotations_total',
        help: 'rotations sent in those statements, by the same outcome',
      },
    );
    this.exchangeBatches = new BatchCounters(
      metrics,
      {
        name: 'token_exchange_batches_total',
        help: 'token_exchange_batch statements (group commit of code exchanges), by outcome: committed, or gave_way to a lock (each exchange then sent alone)',
      },
      {
        name: 'token_exchange_batched_codes_total',
        help: 'code exchanges sent in those statements, by the same outcome',
      },
    );
  }

  /**
   * Adds a pair as the newest of its family (a code's first pair also adds the family). The caller
   * holds the family lock or the code's row, so no other pair of the family is added meanwhile.
   */
  async insert(
    tx: Transaction,
    pair: Omit<TokenPairEntity, 'createdAt' | 'revokedAt' | 'revokedReason' | 'replacedBy'>,
  ): Promise<void> {
    await this.sql.rows(
      `WITH family AS (
         INSERT INTO token_families (code_digest, client_id, user_id) VALUES ($2, $4, $3)
         ON CONFLICT (code_digest) DO NOTHING
       )
       INSERT INTO token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                access_expires_at, refresh_expires_at, generation)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
               (SELECT coalesce(max(generation) + 1, 0) FROM token_pairs WHERE code_digest = $2))`,
      [
        pair.id,
        pair.codeDigest,
        pair.userId,
        pair.clientId,
        pair.scopes,
        pair.accessDigest,
        pair.refreshDigest,
        pair.accessExpiresAt,
        pair.refreshExpiresAt,
      ],
      tx,
    );
  }

  /**
   * A code's exchange in one statement and one round trip (autocommit: nothing is revoked, so no
   * tombstone has to land first). It reads the partner, code and consent rows beside the pairs
   * because the grant's checks and locks must be one unit, in auth-server's lock order.
   */
  async exchangeCode(exchange: CodeExchange): Promise<ExchangeOutcome> {
    const [row] = await this.sql.prepared<ExchangeOutcome & QueryResultRow>(
      'token_exchange',
      TOKEN_EXCHANGE,
      [
        exchange.codeDigest,
        exchange.clientId,
        exchange.secretDigest,
        exchange.redirectUri,
        exchange.codeChallenge,
        exchange.next.id,
        exchange.next.accessDigest,
        exchange.next.refreshDigest,
        exchange.next.accessExpiresAt,
        exchange.next.refreshExpiresAt,
        exchange.at,
      ],
    );
    return row;
  }

  /**
   * `exchangeCode` for several exchanges in one statement and one transaction (group commit, see
   * ExchangeGroupCommit); each outcome is the one it would have had alone, in this order (a code
   * twice: the second answers `replayed`). A batch that gave way to a lock (see the migration
   * 1765100000000-tokenExchangeBatch) consumed nothing, and answers `undefined` for each exchange:
   * its caller sends it alone. Any other failure fails every call of the batch.
   */
  exchangeBatch(batch: readonly CodeExchange[]): Promise<(ExchangeOutcome | undefined)[]> {
    return this.sendBatch<ExchangeOutcome & QueryResultRow>(
      'token_exchange_batch',
      TOKEN_EXCHANGE_BATCH,
      [
        batch.map((e) => e.codeDigest),
        batch.map((e) => e.clientId),
        batch.map((e) => e.secretDigest),
        batch.map((e) => e.redirectUri),
        batch.map((e) => e.codeChallenge),
        batch.map((e) => e.next.id),
        batch.map((e) => e.next.accessDigest),
        batch.map((e) => e.next.refreshDigest),
        batch.map((e) => e.next.accessExpiresAt),
        batch.map((e) => e.next.refreshExpiresAt),
        batch.map((e) => e.at),
      ],
      batch.length,
      this.exchangeBatches,
    );
  }

  /**
   * A live pair's rotation in one statement and one round trip (autocommit), for a pair whose access
   * token is `expectedAccessDigest`, which the caller has tombstoned already; any other pair answers
   * `unexpected` and is left as it was.
   */
  async rotateAlone({ rotation, expectedAccessDigest }: ExpectedRotation): Promise<RefreshOutcome> {
    const [row] = await this.sql.prepared<RefreshRow>('token_refresh', TOKEN_REFRESH, [
      ...refreshValues(rotation),
      expectedAccessDigest,
    ]);
    return row as RefreshOutcome;
  }

  /**
   * `rotateAlone` for several rotations in one statement and one transaction (group commit, see
   * RefreshGroupCommit); each outcome is the one it would have had alone, in this order. Narrowings
   * do not fit its arrays. A batch that gave way to a lock it waited for (see the migration
   * 1764800000000-tokenRefreshBatch) changed nothing, and answers `undefined` for each rotation:
   * its caller sends it alone. Any other failure fails every call of the batch, as it would have
   * failed each alone (a database that is down is not asked twice).
   */
  async rotateBatch(batch: readonly ExpectedRotation[]): Promise<(RefreshOutcome | undefined)[]> {
    const column = <T>(pick: (r: RefreshRotation) => T) => batch.map((b) => pick(b.rotation));
    const rows = await this.sendBatch<RefreshRow>(
      'token_refresh_batch',
      TOKEN_REFRESH_BATCH,
      [
        column((r) => r.refreshDigest),
        column((r) => r.clientId),
        column((r) => r.secretDigest),
        column((r) => r.next.id),
        column((r) => r.next.accessDigest),
        column((r) => r.next.refreshDigest),
        column((r) => r.next.accessExpiresAt),
        column((r) => r.next.refreshExpiresAt),
        column((r) => r.at),
        batch.map((b) => b.expectedAccessDigest),
      ],
      batch.length,
      this.refreshBatches,
    );
    return rows.map((row) => row as RefreshOutcome | undefined);
  }

  /** Counts a refresh batch written elsewhere (RefreshBatchThread), by how it ended. */
  countRefreshBatch(outcomes: readonly (RefreshOutcome | undefined)[]): void {
    if (outcomes.length > 0) {
      this.refreshBatches.count(outcomes[0] === undefined ? 'gave_way' : 'committed', outcomes.length);
    }
  }

  /**
   * A group commit's statement of `items` items, answered one row each in their order (ORDER BY
   * ord), or `undefined` for each when it gave way to a lock; counted either way.
   */
  private async sendBatch<R extends QueryResultRow>(
    name: string,
    text: string,
    values: readonly unknown[],
    items: number,
    counters: BatchCounters,
  ): Promise<(R | undefined)[]> {
    try {
      const rows = await this.sql.prepared<R>(name, text, values);
      // Committed, so never sent again: a short answer fails its calls rather than grant twice.
      if (rows.length !== items) throw new Error(`${name} answered ${rows.length} rows for ${items} items`);
      counters.count('committed', items);
      return rows;
    } catch (err) {
      if (!GAVE_WAY.has((err as { code?: unknown }).code as string)) throw err;
      counters.count('gave_way', items);
      return Array.from({ length: items }, () => undefined);
    }
  }

  /**
   * A live pair's rotation in one statement, in its own transaction opened in the same round trip;
   * `beforeCommit` runs after a rotation and before COMMIT (the old access token's tombstone, read
   * from the row), and a throw from it rolls the rotation back.
   */
  rotateLive(
    rotation: RefreshRotation,
    beforeCommit: (endedAccessDigest: string) => Promise<void>,
  ): Promise<RefreshOutcome> {
    return this.sql.beginWith<RefreshRow, RefreshOutcome>(
      TOKEN_REFRESH,
      [...refreshValues(rotation), null],
      async ([row]) => {
        const outcome = row as RefreshOutcome;
        if (outcome.outcome === 'rotated') await beforeCommit(outcome.endedAccessDigest);
        return outcome;
      },
    );
  }

  private findWhere(where: string, value: string, tx?: Transaction): Promise<TokenPairEntity | null> {
    return this.sql.row<TokenPairEntity>(`${SELECT_PAIR} WHERE ${where} LIMIT 1`, [value], tx);
  }

  findByAccessDigest(accessDigest: string): Promise<TokenPairEntity | null> {
    return this.findWhere('access_digest = $1', accessDigest);
  }

  findByRefreshDigest(tx: Transaction, refreshDigest: string): Promise<TokenPairEntity | null> {
    return this.findWhere('refresh_digest = $1', refreshDigest, tx);
  }

  findById(tx: Transaction, id: string): Promise<TokenPairEntity | null> {
    return this.findWhere('id = $1', id, tx);
  }

  /**
   * Serialises every change to one family (the pairs of one code) until the transaction ends, so
   * a family revocation sees every pair a concurrent rotation inserted.
   */
  async lockFamily(tx: Transaction, codeDigest: string): Promise<void> {
    await this.sql.rows(
      `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
      [`token_family:${codeDigest}`],
      tx,
    );
  }

  /**
   * Marks a pair, live until now, as rotated into `successorId`. `at` is the application clock's
   * time just before commit: a later request that arrived before it raced this rotation.
   */
  async markRotated(tx: Transaction, id: string, successorId: string, at: Date): Promise<void> {
    await this.sql.affected(
      `UPDATE token_pairs SET revoked_at = $3, revoked_reason = 'rotated', replaced_by = $2 WHERE id = $1`,
      [id, successorId, at],
      tx,
    );
  }

  findByEitherDigest(tx: Transaction, digest: string): Promise<TokenPairEntity | null> {
    return this.findWhere('access_digest = $1 OR refresh_digest = $1', digest, tx);
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
    const [statement, params] =
      'pairId' in filter
        ? [revokeLiveWhere('id = $2'), [filter.pairId]]
        : 'codeDigest' in filter
          ? [revokeLiveWhere('code_digest = $2'), [filter.codeDigest]]
          : 'userId' in filter
            ? [REVOKE_LIVE_OF_MEMBER, [filter.clientId, filter.userId]]
            : [REVOKE_LIVE_OF_PARTNER, [filter.clientId]];
    const rows = await this.sql.rows<Pick<TokenPairEntity, 'accessDigest'>>(
      statement,
      [reason, ...params],
      tx,
    );
    return rows.map((r) => r.accessDigest);
  }

  /** Access digests of every pair of a code, live or not (a replay must blank their cache too). */
  async accessDigestsOfCode(tx: Transaction, codeDigest: string): Promise<string[]> {
    const rows = await this.sql.rows<Pick<TokenPairEntity, 'accessDigest'>>(
      `SELECT access_digest AS "accessDigest" FROM token_pairs WHERE code_digest = $1`,
      [codeDigest],
      tx,
    );
    return rows.map((r) => r.accessDigest);
  }
}
