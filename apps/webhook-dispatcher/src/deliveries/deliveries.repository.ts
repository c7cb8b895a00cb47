import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, columns, GroupBatcher, Sql } from '@svc/platform';
import type { WebhookDispatcherConfig } from '../config';
import type { DeliveryAttemptRow, DeliveryRow, DeliveryStatus, GiveUpReason } from './delivery.entity';

export type { DeliveryStatus, GiveUpReason };

export type NewDelivery = Pick<
  DeliveryRow,
  'deliveryId' | 'eventId' | 'eventType' | 'userId' | 'clientId' | 'targetUrl' | 'body'
>;

export type Delivery = NewDelivery & Pick<DeliveryRow, 'status' | 'attempts' | 'firstAttemptAt'>;

/** What claiming an attempt found: ours to run, already run (or the delivery ended), or held by another run. */
export type AttemptClaim = 'claimed' | 'done' | 'busy';

/**
 * One attempt and where it leaves the delivery: `targetUrl` is where it went. `reached`: a request
 * went out (or tried to), so the attempt counts for the endpoint's health; `ok`: it was a 2xx.
 */
export type AttemptRecord = DeliveryAttemptRow &
  Pick<DeliveryRow, 'targetUrl' | 'status' | 'giveUpReason' | 'clientId'> & {
    readonly reached: boolean;
    readonly ok: boolean;
  };

/** What recording an attempt did. */
export interface AttemptRecorded {
  /** False for a duplicate of an attempt already recorded: it must not schedule another. */
  readonly counted: boolean;
  /** Its failure completed WEBHOOK_DISABLE_AFTER of failures: the endpoint is now disabled. */
  readonly endpointDisabled: boolean;
}

/** A delivery as the operators' log shows it (no body). */
export type LoggedDelivery = Omit<DeliveryRow, 'body' | 'firstAttemptAt'>;

export type LoggedAttempt = Omit<DeliveryAttemptRow, 'deliveryId'>;

const LOGGED_COLUMNS = `delivery_id AS "deliveryId", event_id AS "eventId", event_type AS "eventType",
  user_id AS "userId", client_id AS "clientId", target_url AS "targetUrl", status, attempts,
  created_at AS "createdAt", next_attempt_at AS "nextAttemptAt", redelivery_of AS "redeliveryOf",
  give_up_reason AS "giveUpReason"`;

const COLUMNS = `delivery_id AS "deliveryId", event_id AS "eventId", event_type AS "eventType",
  user_id AS "userId", client_id AS "clientId", target_url AS "targetUrl", body, status, attempts,
  first_attempt_at AS "firstAttemptAt"`;

/** Nobody holds the lease on the delivery's next attempt: never taken, recorded, or run out (its run died). */
const LEASE_FREE = `(d.attempt_lease_until IS NULL OR d.attempt_lease_until <= now())`;

/**
 * A first attempt in the backlog: the delivery is pending without an attempt, nobody holds its
 * lease, and it is older than $1 ms (before that, the fan-out that created it may still run it).
 * Index deliveries_backlog.
 */
const IN_BACKLOG = `d.status = 'pending' AND d.attempts = 0 AND ${LEASE_FREE}
  AND d.created_at < now() - $1::int * interval '1 millisecond'`;

/** How stale a healthy endpoint's `last_success_at` may be (see `judged`). */
const HEALTH_SUCCESS_EVERY_MS = 1000;

@Injectable()
export class DeliveriesRepository {
  constructor(
    private readonly sql: Sql,
    @Inject(APP_CONFIG) private readonly config: Pick<WebhookDispatcherConfig, 'WEBHOOK_DISABLE_AFTER'>,
  ) {}

  /**
   * Inserts the deliveries of one event, skipping partners that already have one (a redelivered
   * event), and returns every delivery of the event that has not had an attempt yet: those still
   * need their first attempt. Events fanned out at the same moment share one statement.
   * A partner whose endpoint is disabled gets its delivery recorded as `skipped` (replayable),
   * in the same statement, and not returned: no attempt. A `webhook.test` too: while disabled,
   * the endpoint gets nothing but the test its own enable sends.
   */
  createForEvent(eventId: string, deliveries: readonly NewDelivery[]): Promise<Delivery[]> {
    return this.creations.submit({ eventId, deliveries });
  }

  private readonly creations = new GroupBatcher<
    { eventId: string; deliveries: readonly NewDelivery[] },
    Delivery[]
  >(async (events) => {
    // A second copy of an event in the same batch gets nothing: the first copy's caller works on it.
    const firstOf = new Map<string, number>();
    events.forEach((e, i) => firstOf.has(e.eventId) || firstOf.set(e.eventId, i));
    const all = [...firstOf.values()].flatMap((i) => events[i].deliveries);
    // One statement: the SELECT part reads the snapshot from before the INSERT, so it adds only
    // the rows an earlier copy of an event created, never the ones inserted here.
    const rows = await this.sql.prepared<Delivery>(
      'create-for-events',
      `WITH created AS (
         INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body, status)
         SELECT u.*,
                CASE WHEN e.status = 'disabled' THEN 'skipped' ELSE 'pending' END
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                  AS u (delivery_id, event_id, event_type, user_id, client_id, target_url, body)
           LEFT JOIN webhook_endpoints e ON e.client_id = u.client_id
         ON CONFLICT (event_id, client_id) WHERE redelivery_of IS NULL DO NOTHING
         RETURNING ${COLUMNS})
       SELECT * FROM created WHERE status = 'pending'
       UNION ALL
       SELECT ${COLUMNS} FROM deliveries
        WHERE event_id = ANY($8::text[]) AND status = 'pending' AND attempts = 0 AND redelivery_of IS NULL`,
      [
        ...columns(all, ['deliveryId', 'eventId', 'eventType', 'userId', 'clientId', 'targetUrl', 'body']),
        [...firstOf.keys()],
      ],
    );
    const byEvent = new Map<string, Delivery[]>();
    for (const row of rows) {
      const list = byEvent.get(row.eventId) ?? [];
      list.push(row);
      byEvent.set(row.eventId, list);
    }
    return events.map((e, i) =>
      firstOf.get(e.eventId) === i
        ? (byEvent.get(e.eventId) ?? []).sort((a, b) =>
            a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0,
          )
        : [],
    );
  });

  async findById(deliveryId: string): Promise<Delivery | null> {
    const rows = await this.sql.prepared<Delivery>(
      'find-by-id',
      `SELECT ${COLUMNS} FROM deliveries WHERE delivery_id = $1`,
      [deliveryId],
    );
    return rows[0] ?? null;
  }

  /**
   * Takes the lease on attempt `attempt` of a delivery for `leaseMs`: only one run of an attempt
   * sends it, however many messages ask for it (a redelivered event or attempt message, the backlog
   * copy of a slow first attempt), on this replica or another. Recording the attempt ends the
   * lease; a run that dies leaves it to run out, and the attempt's message, handed out again, then
   * runs it. Claims made at the same moment share one statement.
   */
  claimAttempt(deliveryId: string, attempt: number, leaseMs: number): Promise<AttemptClaim> {
    return this.claims.submit({ deliveryId, attempt, leaseMs });
  }

  private readonly claims = new GroupBatcher<
    { deliveryId: string; attempt: number; leaseMs: number },
    AttemptClaim
  >(async (batch) => {
    const rows = await this.sql.prepared<{ key: string; state: AttemptClaim }>(
      'claim-attempts',
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[]) AS i (delivery_id, attempt, lease_ms)),
       claimed AS (
         UPDATE deliveries d SET attempt_lease_until = now() + i.lease_ms * interval '1 millisecond'
           FROM input i
          WHERE d.delivery_id = i.delivery_id AND d.attempts = i.attempt - 1 AND d.status = 'pending'
            AND ${LEASE_FREE}
          RETURNING d.delivery_id, i.attempt)
       -- d is the snapshot from before the UPDATE: a row it did not claim is another run's, or done.
       SELECT i.delivery_id || ':' || i.attempt AS key,
              CASE WHEN c.delivery_id IS NOT NULL THEN 'claimed'
                   WHEN d.attempts = i.attempt - 1 AND d.status = 'pending' THEN 'busy' ELSE 'done' END AS state
         FROM input i
         LEFT JOIN claimed c ON c.delivery_id = i.delivery_id AND c.attempt = i.attempt
         LEFT JOIN deliveries d ON d.delivery_id = i.delivery_id`,
      columns(batch, ['deliveryId', 'attempt', 'leaseMs']),
    );
    const states = new Map(rows.map((r) => [r.key, r.state]));
    // The same attempt twice in one batch: the first copy claims it, the second finds it busy.
    const taken = new Set<string>();
    return batch.map(({ deliveryId, attempt }) => {
      const key = `${deliveryId}:${attempt}`;
      const state = states.get(key) ?? 'done';
      if (state !== 'claimed') return state;
      if (taken.has(key)) return 'busy';
      taken.add(key);
      return state;
    });
  });

  /**
   * The partners with a first attempt in the backlog older than `dueAfterMs`. A loose index scan
   * (one probe of deliveries_backlog per partner, however many rows each has): a partner
   * replaying 10,000 deliveries costs this statement what any other partner costs.
   */
  async backlogPartners(dueAfterMs: number): Promise<string[]> {
    const rows = await this.sql.prepared<{ clientId: string }>(
      'backlog-partners',
      `WITH RECURSIVE partner AS (
         (SELECT client_id FROM deliveries WHERE status = 'pending' AND attempts = 0 ORDER BY client_id LIMIT 1)
         UNION ALL
         SELECT (SELECT n.client_id FROM deliveries n
                  WHERE n.status = 'pending' AND n.attempts = 0 AND n.client_id > p.client_id
                  ORDER BY n.client_id LIMIT 1)
           FROM partner p WHERE p.client_id IS NOT NULL)
       SELECT p.client_id AS "clientId" FROM partner p
        WHERE p.client_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM deliveries d WHERE d.client_id = p.client_id AND ${IN_BACKLOG})`,
      [dueAfterMs],
    );
    return rows.map((r) => r.clientId);
  }

  /**
   * Takes the lease (`leaseMs`) on the oldest first attempts of the backlog, at most `take` of
   * each partner, and returns their deliveries. Rows another replica is claiming at the same
   * moment are skipped (SKIP LOCKED), never claimed twice.
   */
  claimBacklog(
    take: readonly { clientId: string; count: number }[],
    dueAfterMs: number,
    leaseMs: number,
  ): Promise<Delivery[]> {
    return this.sql.prepared<Delivery>(
      'claim-backlog',
      `WITH wanted AS (
         SELECT * FROM unnest($2::text[], $3::int[]) AS w (client_id, count)),
       picked AS (
         SELECT x.delivery_id AS picked_id FROM wanted w
          CROSS JOIN LATERAL (
            SELECT d.delivery_id FROM deliveries d
             WHERE d.client_id = w.client_id AND ${IN_BACKLOG}
             ORDER BY d.created_at LIMIT w.count
             FOR UPDATE SKIP LOCKED) x)
       UPDATE deliveries d SET attempt_lease_until = now() + $4::int * interval '1 millisecond'
         FROM picked p WHERE d.delivery_id = p.picked_id
       RETURNING ${COLUMNS}`,
      [dueAfterMs, take.map((t) => t.clientId), take.map((t) => t.count), leaseMs],
    );
  }

  /**
   * Logs attempt `attempt` and moves the delivery on, atomically. Only the first recording of an
   * attempt counts: a duplicate message that ran the same attempt returns false, and must not
   * schedule another. Attempts finishing at the same moment share one statement (one commit).
   * The same statement keeps each endpoint's health (one upsert per partner of the batch), its
   * attempts and successes of the hour (webhook_endpoint_hours, which the partner's endpoint health
   * reads instead of scanning a day of attempts), and disables an endpoint whose attempts have all failed for WEBHOOK_DISABLE_AFTER: no extra round
   * trip on the delivery path.
   */
  async recordAttempt(record: AttemptRecord): Promise<AttemptRecorded> {
    const recorded = await this.records.submit(record);
    if (recorded instanceof Error) throw recorded;
    return recorded;
  }

  /**
   * A batch mixes partners: when its statement fails, each record is written again alone, so a
   * record that cannot be written fails its own attempt only, never another partner's (whose
   * attempt went out and would otherwise be sent again).
   */
  private readonly records = new GroupBatcher<AttemptRecord, AttemptRecorded | Error>(async (batch) => {
    try {
      return await this.writeAttempts(batch);
    } catch (err) {
      if (batch.length === 1) throw err;
      return Promise.all(
        batch.map((r) =>
          this.writeAttempts([r]).then(
            ([recorded]) => recorded,
            (alone: unknown) => (alone instanceof Error ? alone : new Error(String(alone))),
          ),
        ),
      );
    }
  });

  private async writeAttempts(batch: readonly AttemptRecord[]): Promise<AttemptRecorded[]> {
    // The same attempt twice in one batch: only the first can count.
    const firstOf = new Map<string, number>();
    batch.forEach((r, i) => firstOf.has(r.deliveryId) || firstOf.set(r.deliveryId, i));
    const unique = [...firstOf.values()].map((i) => batch[i]);
    const rows = await this.sql.prepared<{ deliveryId: string | null; disabledClientId: string | null }>(
      'record-attempts',
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[],
                              $6::int[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[],
                              $12::bool[], $13::bool[], $15::bool[])
                    AS i (delivery_id, attempt, status, next_attempt_at, started_at, duration_ms, status_code, error,
                          target_url, response_body, give_up_reason, judged, ok, reached)),
       moved AS (
         UPDATE deliveries d
            SET attempts = i.attempt, status = i.status, next_attempt_at = i.next_attempt_at, attempt_lease_until = NULL,
                first_attempt_at = COALESCE(d.first_attempt_at, i.started_at), target_url = i.target_url,
                give_up_reason = i.give_up_reason
           FROM input i
          WHERE d.delivery_id = i.delivery_id AND d.attempts = i.attempt - 1 AND d.status = 'pending'
          RETURNING i.*, d.client_id),
       logged AS (
         INSERT INTO delivery_attempts
           (delivery_id, attempt, started_at, duration_ms, status_code, error, next_attempt_at, response_body)
         SELECT delivery_id, attempt, started_at, duration_ms, status_code, error, next_attempt_at, response_body
           FROM moved
         RETURNING delivery_id),
       per_client AS (
         SELECT client_id, max(started_at) FILTER (WHERE ok) AS success, max(started_at) FILTER (WHERE NOT ok) AS failure
           FROM moved WHERE judged GROUP BY client_id),
       health AS (
         SELECT p.client_id, p.success, p.failure,
                (SELECT min(m.started_at) FROM moved m
                  WHERE m.judged AND NOT m.ok AND m.client_id = p.client_id
                    AND (p.success IS NULL OR m.started_at > p.success)) AS failing_from
           FROM per_client p),
       endpoints AS (
         INSERT INTO webhook_endpoints AS e (client_id, last_success_at, last_failure_at, failing_since)
         SELECT client_id, success, failure, failing_from FROM health ORDER BY client_id
         ON CONFLICT (client_id) DO UPDATE SET
           last_success_at = GREATEST(e.last_success_at, EXCLUDED.last_success_at),
           last_failure_at = GREATEST(e.last_failure_at, EXCLUDED.last_failure_at),
           failing_since = CASE WHEN EXCLUDED.last_success_at IS NOT NULL THEN EXCLUDED.failing_since
                                ELSE COALESCE(e.failing_since, EXCLUDED.failing_since) END,
           status = CASE WHEN e.status = 'enabled' AND EXCLUDED.last_success_at IS NULL
                          AND COALESCE(e.failing_since, EXCLUDED.failing_since) <= now() - $14::bigint * interval '1 millisecond'
                         THEN 'disabled' ELSE e.status END,
           disabled_at = CASE WHEN e.status = 'enabled' AND EXCLUDED.last_success_at IS NULL
                          AND COALESCE(e.failing_since, EXCLUDED.failing_since) <= now() - $14::bigint * interval '1 millisecond'
                         THEN now() ELSE e.disabled_at END,
           disabled_reason = CASE WHEN e.status = 'enabled' AND EXCLUDED.last_success_at IS NULL
                          AND COALESCE(e.failing_since, EXCLUDED.failing_since) <= now() - $14::bigint * interval '1 millisecond'
                         THEN 'failing' ELSE e.disabled_reason END,
           updated_at = now()
         RETURNING e.client_id, e.status = 'disabled' AND e.disabled_at = now() AS disabled_now),
       hours AS (
         INSERT INTO webhook_endpoint_hours AS h (client_id, hour, attempts, successes)
         SELECT client_id, date_trunc('hour', started_at), count(*), count(*) FILTER (WHERE ok)
           FROM moved WHERE reached GROUP BY 1, 2 ORDER BY 1, 2
         ON CONFLICT (client_id, hour) DO UPDATE SET
           attempts = h.attempts + EXCLUDED.attempts, successes = h.successes + EXCLUDED.successes)
       SELECT delivery_id AS "deliveryId", NULL::text AS "disabledClientId" FROM logged
       UNION ALL
       SELECT NULL, client_id FROM endpoints WHERE disabled_now`,
      [
        ...columns(unique, [
          'deliveryId',
          'attempt',
          'status',
          'nextAttemptAt',
          'startedAt',
          'durationMs',
          'statusCode',
          'error',
          'targetUrl',
          'responseBody',
          'giveUpReason',
        ]),
        unique.map((r) => this.judged(r)),
        unique.map((r) => r.ok),
        this.config.WEBHOOK_DISABLE_AFTER,
        unique.map((r) => r.reached),
      ],
    );
    const counted = new Set(rows.map((r) => r.deliveryId).filter((id) => id !== null));
    // An endpoint this statement disabled is told once, with the first of its attempts here.
    const disabled = new Set(rows.map((r) => r.disabledClientId).filter((id) => id !== null));
    return batch.map((r, i) => ({
      counted: firstOf.get(r.deliveryId) === i && counted.has(r.deliveryId),
      endpointDisabled: disabled.delete(r.clientId),
    }));
  }

  /**
   * Whether an attempt goes into its endpoint's health. Every failure does (it starts or extends a
   * failing streak, which can disable the endpoint). Of a healthy endpoint's successes, one per
   * HEALTH_SUCCESS_EVERY_MS per process is enough: `last_success_at` is then at most that stale,
   * and a busy partner's row is not rewritten by every batch. After a failure, the next success is
   * written at once (it ends the streak).
   */
  private judged(record: AttemptRecord): boolean {
    if (!record.reached) return false;
    const now = Date.now();
    if (!record.ok) {
      this.healthySince.delete(record.clientId);
      return true;
    }
    const written = this.healthySince.get(record.clientId);
    if (written !== undefined && now - written < HEALTH_SUCCESS_EVERY_MS) return false;
    if (this.healthySince.size >= 10_000) this.healthySince.clear();
    this.healthySince.set(record.clientId, now);
    return true;
  }

  /** When this process last wrote a success of each endpoint that has not failed since. */
  private readonly healthySince = new Map<string, number>();

  /** A partner's deliveries, newest first (index deliveries_client_status). */
  async listForClient(
    clientId: string,
    status: DeliveryStatus | undefined,
    limit: number,
  ): Promise<LoggedDelivery[]> {
    return this.sql.rows<LoggedDelivery>(
      `SELECT ${LOGGED_COLUMNS} FROM deliveries
        WHERE client_id = $1 AND ($2::text IS NULL OR status = $2)
        ORDER BY created_at DESC, delivery_id DESC LIMIT $3`,
      [clientId, status ?? null, limit],
    );
  }

  async findLogged(deliveryId: string): Promise<LoggedDelivery | null> {
    return this.sql.row<LoggedDelivery>(`SELECT ${LOGGED_COLUMNS} FROM deliveries WHERE delivery_id = $1`, [
      deliveryId,
    ]);
  }

  attemptsOf(deliveryId: string): Promise<LoggedAttempt[]> {
    return this.sql.rows<LoggedAttempt>(
      `SELECT attempt, started_at AS "startedAt", status_code AS "statusCode", duration_ms AS "durationMs", error,
              next_attempt_at AS "nextAttemptAt", response_body AS "responseBody"
         FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`,
      [deliveryId],
    );
  }

  /**
   * Deletes up to `limit` finished deliveries (delivered or given up) created more than
   * `olderThanDays` ago, with their attempts; returns how many. A delivery whose redelivery is
   * still pending or younger than the cutoff stays (deleting it would take the redelivery along).
   */
  async pruneFinished(olderThanDays: number, limit: number): Promise<number> {
    const row = await this.sql.row<{ deleted: number }>(
      `WITH doomed AS (
         SELECT d.delivery_id FROM deliveries d
          WHERE d.status <> 'pending' AND d.created_at < now() - make_interval(days => $1)
            AND NOT EXISTS (
              SELECT 1 FROM deliveries r
               WHERE r.redelivery_of = d.delivery_id
                 AND (r.status = 'pending' OR r.created_at >= now() - make_interval(days => $1)))
          ORDER BY d.created_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ), gone AS (
         DELETE FROM deliveries d USING doomed WHERE d.delivery_id = doomed.delivery_id RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [olderThanDays, limit],
    );
    return row?.deleted ?? 0;
  }

  /** Forgets the hourly attempt counts no endpoint health reads any more (older than 25 hours). */
  async pruneEndpointHours(): Promise<number> {
    return this.sql.affected(`DELETE FROM webhook_endpoint_hours WHERE hour < now() - interval '25 hours'`);
  }
}
