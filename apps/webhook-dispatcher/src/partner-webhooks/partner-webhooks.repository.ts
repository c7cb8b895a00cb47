import { Injectable } from '@nestjs/common';
import type { PartnerDeliveryStatus } from '@svc/contracts';
import { columns, newId, Sql, TransactionRunner, type Transaction } from '@svc/platform';
import type {
  DeliveryAttemptRow,
  DeliveryRow,
  EndpointStatus,
  WebhookEndpointRow,
} from '../deliveries/delivery.entity';
import type { DeliveryListQuery, ReplayRequest } from './dto/delivery-requests.dto';

/** A delivery as a partner's log shows it: its row and its latest attempt. */
export type PartnerDelivery = Pick<
  DeliveryRow,
  | 'deliveryId'
  | 'eventId'
  | 'eventType'
  | 'userId'
  | 'status'
  | 'attempts'
  | 'createdAt'
  | 'nextAttemptAt'
  | 'redeliveryOf'
  | 'giveUpReason'
> & {
  /** `created_at` to the microsecond, as the keyset cursor carries it. */
  readonly createdAtExact: string;
  /** The status as partners name it (PARTNER_STATUS). */
  readonly partnerStatus: PartnerDeliveryStatus;
  readonly lastAttemptAt: Date | null;
  readonly lastResponseStatus: number | null;
};

export interface ListPosition {
  readonly createdAt: string;
  readonly deliveryId: string;
}

export type EndpointState = Omit<WebhookEndpointRow, 'clientId' | 'failingSince'> & {
  readonly attempts24h: number;
  readonly successes24h: number;
};

export interface ReplayOutcome {
  /** The new deliveries, to queue; empty when refused. */
  readonly deliveryIds: string[];
  /** Set when the hourly budget is spent: seconds until the oldest replay of the hour leaves it. */
  readonly retryAfterSeconds?: number;
}

/**
 * The stored status as partners name it (the stored ones predate these names): attempts under way
 * read `failed`, a given-up delivery `given_up`.
 */
const PARTNER_STATUS = `CASE WHEN d.status = 'pending' AND d.attempts > 0 THEN 'failed'
                             WHEN d.status = 'failed' THEN 'given_up' ELSE d.status END`;

const PARTNER_COLUMNS = `d.delivery_id AS "deliveryId", d.event_id AS "eventId", d.event_type AS "eventType",
  d.user_id AS "userId", d.status, ${PARTNER_STATUS} AS "partnerStatus", d.attempts, d.created_at AS "createdAt",
  to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "createdAtExact",
  d.next_attempt_at AS "nextAttemptAt", d.redelivery_of AS "redeliveryOf", d.give_up_reason AS "giveUpReason",
  la.started_at AS "lastAttemptAt", la.status_code AS "lastResponseStatus"`;

// The latest attempt through the attempts' primary key (delivery_id, attempt): one index probe.
const LATEST_ATTEMPT = `LEFT JOIN LATERAL (
    SELECT a.started_at, a.status_code FROM delivery_attempts a
     WHERE a.delivery_id = d.delivery_id ORDER BY a.attempt DESC LIMIT 1) la ON true`;

/** The partner's own rows only: every statement here is bound to the caller's client_id. */
@Injectable()
export class PartnerWebhooksRepository {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
  ) {}

  /** One page, newest first, after `after` (index deliveries_client_newest). */
  page(
    clientId: string,
    filter: Omit<DeliveryListQuery, 'limit' | 'cursor'>,
    after: ListPosition | undefined,
    limit: number,
  ): Promise<PartnerDelivery[]> {
    return this.sql.rows<PartnerDelivery>(
      `SELECT ${PARTNER_COLUMNS} FROM deliveries d ${LATEST_ATTEMPT}
        WHERE d.client_id = $1
          AND ($2::text IS NULL OR ${PARTNER_STATUS} = $2)
          AND ($3::text IS NULL OR d.event_type = $3)
          AND ($4::timestamptz IS NULL OR d.created_at >= $4)
          AND ($5::timestamptz IS NULL OR d.created_at < $5)
          AND ($6::timestamptz IS NULL OR (d.created_at, d.delivery_id) < ($6::timestamptz, $7::text))
        ORDER BY d.created_at DESC, d.delivery_id DESC
        LIMIT $8`,
      [
        clientId,
        filter.status ?? null,
        filter.event_type ?? null,
        filter.since ?? null,
        filter.until ?? null,
        after?.createdAt ?? null,
        after?.deliveryId ?? null,
        limit,
      ],
    );
  }

  /** The delivery, when it is this partner's; another partner's is simply not there. */
  find(clientId: string, deliveryId: string): Promise<PartnerDelivery | null> {
    return this.sql.row<PartnerDelivery>(
      `SELECT ${PARTNER_COLUMNS} FROM deliveries d ${LATEST_ATTEMPT}
        WHERE d.delivery_id = $1 AND d.client_id = $2`,
      [deliveryId, clientId],
    );
  }

  /**
   * The endpoint's row (none yet: enabled, never attempted) and its attempts of the last 24 hours,
   * counted by the hour as they were recorded (webhook_endpoint_hours): at most 25 rows read,
   * however busy the partner. The hour the window starts in counts whole.
   */
  async endpoint(clientId: string): Promise<EndpointState> {
    const row = await this.sql.row<EndpointState>(
      `SELECT COALESCE(e.status, 'enabled') AS status, e.disabled_at AS "disabledAt",
              e.disabled_reason AS "disabledReason", e.last_success_at AS "lastSuccessAt",
              e.last_failure_at AS "lastFailureAt", s.attempts AS "attempts24h", s.successes AS "successes24h"
         FROM (SELECT $1::text AS client_id) c
         LEFT JOIN webhook_endpoints e ON e.client_id = c.client_id
         CROSS JOIN LATERAL (
           SELECT COALESCE(sum(h.attempts), 0)::int AS attempts, COALESCE(sum(h.successes), 0)::int AS successes
             FROM webhook_endpoint_hours h
            WHERE h.client_id = c.client_id AND h.hour > date_trunc('hour', now()) - interval '24 hours') s`,
      [clientId],
    );
    return row as EndpointState;
  }

  /**
   * Enables or disables the endpoint. Enabling starts its health afresh (the test that enabled it
   * succeeded); disabling by an operator keeps the health and says who disabled it.
   */
  async setStatus(clientId: string, status: EndpointStatus, reason: string | null): Promise<void> {
    await this.sql.affected(
      `INSERT INTO webhook_endpoints AS e (client_id, status, disabled_at, disabled_reason)
       VALUES ($1, $2, CASE WHEN $2 = 'disabled' THEN now() END, $3)
       ON CONFLICT (client_id) DO UPDATE SET
         status = EXCLUDED.status,
         disabled_at = CASE WHEN EXCLUDED.status = 'disabled' THEN COALESCE(
                         CASE WHEN e.status = 'disabled' THEN e.disabled_at END, now()) END,
         disabled_reason = CASE WHEN EXCLUDED.status = 'disabled' THEN COALESCE(
                         CASE WHEN e.status = 'disabled' THEN e.disabled_reason END, EXCLUDED.disabled_reason) END,
         failing_since = CASE WHEN EXCLUDED.status = 'enabled' THEN NULL ELSE e.failing_since END,
         updated_at = now()`,
      [clientId, status, status === 'disabled' ? reason : null],
    );
  }

  /**
   * The enable test as one finished delivery of `webhook.test` with its single attempt, in the log
   * like any other (one statement). Its health counts like any attempt's.
   */
  async recordTest(
    test: Pick<DeliveryRow, 'deliveryId' | 'eventId' | 'userId' | 'clientId' | 'targetUrl' | 'body'> &
      Pick<DeliveryAttemptRow, 'startedAt' | 'durationMs' | 'statusCode' | 'error' | 'responseBody'> & {
        readonly ok: boolean;
      },
  ): Promise<void> {
    await this.sql.affected(
      `WITH d AS (
         INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body, status,
                                 attempts, first_attempt_at, give_up_reason)
         VALUES ($1, $2, 'webhook.test', $3, $4, $5, $6, CASE WHEN $12 THEN 'delivered' ELSE 'failed' END,
                 1, $7, CASE WHEN $12 THEN NULL ELSE 'attempts_exhausted' END)
         RETURNING delivery_id),
       a AS (
         INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error,
                                        response_body)
         SELECT delivery_id, 1, $7, $8, $9, $10, $11 FROM d),
       h AS (
         INSERT INTO webhook_endpoint_hours AS h (client_id, hour, attempts, successes)
         VALUES ($4, date_trunc('hour', $7::timestamptz), 1, CASE WHEN $12 THEN 1 ELSE 0 END)
         ON CONFLICT (client_id, hour) DO UPDATE SET
           attempts = h.attempts + 1, successes = h.successes + EXCLUDED.successes)
       INSERT INTO webhook_endpoints AS e (client_id, last_success_at, last_failure_at)
       VALUES ($4, CASE WHEN $12 THEN $7::timestamptz END, CASE WHEN $12 THEN NULL ELSE $7::timestamptz END)
       ON CONFLICT (client_id) DO UPDATE SET
         last_success_at = GREATEST(e.last_success_at, EXCLUDED.last_success_at),
         last_failure_at = GREATEST(e.last_failure_at, EXCLUDED.last_failure_at),
         updated_at = now()`,
      [
        test.deliveryId,
        test.eventId,
        test.userId,
        test.clientId,
        test.targetUrl,
        test.body,
        test.startedAt,
        test.durationMs,
        test.statusCode,
        test.error,
        test.responseBody,
        test.ok,
      ],
    );
  }

  /**
   * A replay: a new delivery (new id, same event and body, `redelivery_of` the old one) for each
   * of the partner's finished deliveries created in [since, until) with that status, oldest first,
   * at most `max`, unless the partner has already replayed `perHour` times in the last hour. A
   * delivery still being retried is never replayed: its own series goes on, and a replay would
   * double it.
   */
  replay(
    clientId: string,
    window: ReplayRequest,
    limits: { readonly perHour: number; readonly max: number },
  ): Promise<ReplayOutcome> {
    return this.withinBudget(clientId, 'replay', limits.perHour, async (tx) => {
      const sources = await this.sql.rows<{ deliveryId: string }>(
        `SELECT d.delivery_id AS "deliveryId" FROM deliveries d
          WHERE d.client_id = $1 AND d.created_at >= $2 AND d.created_at < $3 AND d.status <> 'pending'
            AND ${PARTNER_STATUS} = $4
          ORDER BY d.created_at, d.delivery_id LIMIT $5`,
        [clientId, window.since, window.until, window.status, limits.max],
        tx,
      );
      return this.repeat(
        sources.map((s) => s.deliveryId),
        tx,
      );
    });
  }

  /**
   * A redelivery of one finished delivery of the partner's, unless it has already asked for
   * `perHour` in the last hour: the new delivery's id, or none when the source is not a finished
   * delivery of this partner (the service has told pending and unknown ones apart before).
   */
  redeliver(clientId: string, sourceId: string, perHour: number): Promise<ReplayOutcome> {
    return this.withinBudget(clientId, 'redelivery', perHour, async (tx) => {
      const source = await this.sql.rows<{ deliveryId: string }>(
        `SELECT delivery_id AS "deliveryId" FROM deliveries
          WHERE delivery_id = $1 AND client_id = $2 AND status <> 'pending'`,
        [sourceId, clientId],
        tx,
      );
      return this.repeat(
        source.map((s) => s.deliveryId),
        tx,
      );
    });
  }

  /**
   * One endpoint test (a test event, or enabling), unless the partner has made `perHour` in the
   * last hour; counted before it is sent, whatever the endpoint answers.
   */
  spendEndpointCheck(clientId: string, perHour: number): Promise<ReplayOutcome> {
    return this.withinBudget(clientId, 'endpoint_check', perHour, () => Promise.resolve([]));
  }

  /**
   * Runs `create` unless the partner has spent its `perHour` calls of this kind in the last hour,
   * and counts the call. Calls of one partner queue on an advisory lock, so the budget holds
   * across replicas; only the last hour's rows are kept.
   */
  private withinBudget(
    clientId: string,
    kind: 'replay' | 'redelivery' | 'endpoint_check',
    perHour: number,
    create: (tx: Transaction) => Promise<string[]>,
  ): Promise<ReplayOutcome> {
    return this.transactions.run(async (tx) => {
      await this.sql.rows(
        `SELECT pg_advisory_xact_lock(hashtext($2), hashtext($1))`,
        [clientId, `webhook-${kind}`],
        tx,
      );
      await this.sql.affected(
        `DELETE FROM webhook_replays WHERE client_id = $1 AND kind = $2 AND replayed_at <= now() - interval '1 hour'`,
        [clientId, kind],
        tx,
      );
      const budget = await this.sql.row<{ used: number; waitSeconds: number | null }>(
        `SELECT count(*)::int AS used,
                ceil(extract(epoch FROM min(replayed_at) + interval '1 hour' - now()))::int AS "waitSeconds"
           FROM webhook_replays WHERE client_id = $1 AND kind = $2 AND replayed_at > now() - interval '1 hour'`,
        [clientId, kind],
        tx,
      );
      if (budget && budget.used >= perHour) {
        return { deliveryIds: [], retryAfterSeconds: Math.max(1, budget.waitSeconds ?? 1) };
      }
      const deliveryIds = await create(tx);
      await this.sql.affected(
        `INSERT INTO webhook_replays (client_id, replayed_count, kind) VALUES ($1, $2, $3)`,
        [clientId, deliveryIds.length, kind],
        tx,
      );
      return { deliveryIds };
    });
  }

  /**
   * A new delivery repeating each source (same event, partner, target and body bytes, no attempts
   * yet); their ids. A source that does not exist repeats nothing (its id is not a delivery).
   */
  async repeat(sourceIds: readonly string[], tx?: Transaction): Promise<string[]> {
    const pairs = sourceIds.map((sourceId) => ({ sourceId, deliveryId: newId('dlv', 16) }));
    if (pairs.length > 0) {
      await this.sql.affected(
        `INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body,
                                 redelivery_of)
         SELECT p.delivery_id, d.event_id, d.event_type, d.user_id, d.client_id, d.target_url, d.body,
                d.delivery_id
           FROM unnest($1::text[], $2::text[]) AS p (source_id, delivery_id)
           JOIN deliveries d ON d.delivery_id = p.source_id`,
        columns(pairs, ['sourceId', 'deliveryId']),
        tx,
      );
    }
    return pairs.map((p) => p.deliveryId);
  }
}
