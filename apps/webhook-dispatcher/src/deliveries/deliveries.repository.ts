import { Injectable } from '@nestjs/common';
import { TransactionRunner, GroupBatcher, Sql } from '@svc/platform';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface NewDelivery {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly userId: string;
  readonly clientId: string;
  readonly targetUrl: string;
  readonly body: string;
}

export interface Delivery extends NewDelivery {
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly firstAttemptAt: Date | null;
}

export interface AttemptRecord {
  readonly deliveryId: string;
  readonly attempt: number;
  /** Where the attempt went: the partner's registered URL at the time. */
  readonly targetUrl: string;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  /** Null when there is no further attempt. */
  readonly nextAttemptAt: Date | null;
  readonly status: DeliveryStatus;
}

/** A delivery as the operators' log shows it (no body). */
export interface LoggedDelivery {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly userId: string;
  readonly clientId: string;
  readonly targetUrl: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly nextAttemptAt: Date | null;
  /** The delivery this one repeats (an operator's redelivery), or null. */
  readonly redeliveryOf: string | null;
}

export interface LoggedAttempt {
  readonly attempt: number;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly nextAttemptAt: Date | null;
}

interface LoggedRow {
  delivery_id: string;
  event_id: string;
  event_type: string;
  user_id: string;
  client_id: string;
  target_url: string;
  status: DeliveryStatus;
  attempts: number;
  created_at: Date;
  next_attempt_at: Date | null;
  redelivery_of: string | null;
}

const LOGGED_COLUMNS = `delivery_id, event_id, event_type, user_id, client_id, target_url, status, attempts,
                        created_at, next_attempt_at, redelivery_of`;

interface Row {
  delivery_id: string;
  event_id: string;
  event_type: string;
  user_id: string;
  client_id: string;
  target_url: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  first_attempt_at: Date | null;
}

const COLUMNS = `delivery_id, event_id, event_type, user_id, client_id, target_url, body, status, attempts,
                 first_attempt_at`;

@Injectable()
export class DeliveriesRepository {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly sql: Sql,
  ) {}


  /**
   * Inserts the deliveries of one event, skipping partners that already have one (a redelivered
   * event), and returns every delivery of the event that has not had an attempt yet: those still
   * need their first attempt. Events fanned out at the same moment share one statement.
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
    const rows = await this.sql.prepared<Row>(
      'create-for-events',
      `WITH created AS (
         INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         ON CONFLICT (event_id, client_id) WHERE redelivery_of IS NULL DO NOTHING
         RETURNING ${COLUMNS})
       SELECT ${COLUMNS} FROM created
       UNION ALL
       SELECT ${COLUMNS} FROM deliveries
        WHERE event_id = ANY($8::text[]) AND status = 'pending' AND attempts = 0 AND redelivery_of IS NULL`,
      [
        all.map((d) => d.deliveryId),
        all.map((d) => d.eventId),
        all.map((d) => d.eventType),
        all.map((d) => d.userId),
        all.map((d) => d.clientId),
        all.map((d) => d.targetUrl),
        all.map((d) => d.body),
        [...firstOf.keys()],
      ],
    );
    const byEvent = new Map<string, Delivery[]>();
    for (const row of rows) {
      const list = byEvent.get(row.event_id) ?? [];
      list.push(toDelivery(row));
      byEvent.set(row.event_id, list);
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
    const rows = await this.sql.prepared<Row>(
      'find-by-id',
      `SELECT ${COLUMNS} FROM deliveries WHERE delivery_id = $1`,
      [deliveryId],
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  /**
   * Logs attempt `attempt` and moves the delivery on, atomically. Only the first recording of an
   * attempt counts: a duplicate message that ran the same attempt returns false, and must not
   * schedule another. Attempts finishing at the same moment share one statement (one commit).
   */
  recordAttempt(record: AttemptRecord): Promise<boolean> {
    return this.records.submit(record);
  }

  private readonly records = new GroupBatcher<AttemptRecord, boolean>(async (batch) => {
    // The same attempt twice in one batch: only the first can count.
    const firstOf = new Map<string, number>();
    batch.forEach((r, i) => firstOf.has(r.deliveryId) || firstOf.set(r.deliveryId, i));
    const unique = [...firstOf.values()].map((i) => batch[i]);
    const moved = await this.sql.prepared<{ delivery_id: string }>(
      'record-attempts',
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[],
                              $6::int[], $7::int[], $8::text[], $9::text[])
                    AS i (delivery_id, attempt, status, next_attempt_at, started_at, duration_ms, status_code, error,
                          target_url)),
       moved AS (
         UPDATE deliveries d
            SET attempts = i.attempt, status = i.status, next_attempt_at = i.next_attempt_at,
                first_attempt_at = COALESCE(d.first_attempt_at, i.started_at), target_url = i.target_url
           FROM input i
          WHERE d.delivery_id = i.delivery_id AND d.attempts = i.attempt - 1 AND d.status = 'pending'
          RETURNING i.*)
       INSERT INTO delivery_attempts
         (delivery_id, attempt, started_at, duration_ms, status_code, error, next_attempt_at)
       SELECT delivery_id, attempt, started_at, duration_ms, status_code, error, next_attempt_at FROM moved
       RETURNING delivery_id`,
      [
        unique.map((r) => r.deliveryId),
        unique.map((r) => r.attempt),
        unique.map((r) => r.status),
        unique.map((r) => r.nextAttemptAt),
        unique.map((r) => r.startedAt),
        unique.map((r) => r.durationMs),
        unique.map((r) => r.statusCode),
        unique.map((r) => r.error),
        unique.map((r) => r.targetUrl),
      ],
    );
    const counted = new Set(moved.map((m) => m.delivery_id));
    return batch.map((r, i) => firstOf.get(r.deliveryId) === i && counted.has(r.deliveryId));
  });

  /** A partner's deliveries, newest first (index deliveries_client_status). */
  async listForClient(
    clientId: string,
    status: DeliveryStatus | undefined,
    limit: number,
  ): Promise<LoggedDelivery[]> {
    const rows = await this.transactions.outside.query<LoggedRow[]>(
      `SELECT ${LOGGED_COLUMNS} FROM deliveries
        WHERE client_id = $1 AND ($2::text IS NULL OR status = $2)
        ORDER BY created_at DESC, delivery_id DESC LIMIT $3`,
      [clientId, status ?? null, limit],
    );
    return rows.map(toLogged);
  }

  async findLogged(deliveryId: string): Promise<LoggedDelivery | null> {
    const rows = await this.transactions.outside.query<LoggedRow[]>(
      `SELECT ${LOGGED_COLUMNS} FROM deliveries WHERE delivery_id = $1`,
      [deliveryId],
    );
    return rows[0] ? toLogged(rows[0]) : null;
  }

  async attemptsOf(deliveryId: string): Promise<LoggedAttempt[]> {
    const rows = await this.transactions.outside.query<
      {
        attempt: number;
        started_at: Date;
        duration_ms: number;
        status_code: number | null;
        error: string | null;
        next_attempt_at: Date | null;
      }[]
    >(
      `SELECT attempt, started_at, duration_ms, status_code, error, next_attempt_at
         FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`,
      [deliveryId],
    );
    return rows.map((r) => ({
      attempt: r.attempt,
      startedAt: r.started_at,
      durationMs: r.duration_ms,
      statusCode: r.status_code,
      error: r.error,
      nextAttemptAt: r.next_attempt_at,
    }));
  }

  /**
   * A new delivery repeating `sourceId`: same event, partner, target and body bytes, no attempts
   * yet. Null when the source does not exist.
   */
  async createRedelivery(sourceId: string, deliveryId: string): Promise<LoggedDelivery | null> {
    const rows = await this.transactions.outside.query<LoggedRow[]>(
      `INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body,
                               redelivery_of)
       SELECT $2, event_id, event_type, user_id, client_id, target_url, body, delivery_id
         FROM deliveries WHERE delivery_id = $1
       RETURNING ${LOGGED_COLUMNS}`,
      [sourceId, deliveryId],
    );
    return rows[0] ? toLogged(rows[0]) : null;
  }

  /**
   * Deletes up to `limit` finished deliveries (delivered or given up) created more than
   * `olderThanDays` ago, with their attempts; returns how many. A delivery whose redelivery is
   * still pending or younger than the cutoff stays (deleting it would take the redelivery along).
   */
  async pruneFinished(olderThanDays: number, limit: number): Promise<number> {
    const rows = (await this.transactions.outside.query(
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
    )) as { deleted: number }[];
    return rows[0]?.deleted ?? 0;
  }

  /** Removes a delivery that never had an attempt (a redelivery whose message was refused). */
  async deleteUnattempted(deliveryId: string): Promise<void> {
    await this.transactions.outside.query(`DELETE FROM deliveries WHERE delivery_id = $1 AND attempts = 0`, [
      deliveryId,
    ]);
  }
}

function toLogged(r: LoggedRow): LoggedDelivery {
  return {
    deliveryId: r.delivery_id,
    eventId: r.event_id,
    eventType: r.event_type,
    userId: r.user_id,
    clientId: r.client_id,
    targetUrl: r.target_url,
    status: r.status,
    attempts: r.attempts,
    createdAt: r.created_at,
    nextAttemptAt: r.next_attempt_at,
    redeliveryOf: r.redelivery_of,
  };
}

function toDelivery(r: Row): Delivery {
  return {
    deliveryId: r.delivery_id,
    eventId: r.event_id,
    eventType: r.event_type,
    userId: r.user_id,
    clientId: r.client_id,
    targetUrl: r.target_url,
    body: r.body,
    status: r.status,
    attempts: r.attempts,
    firstAttemptAt: r.first_attempt_at,
  };
}
