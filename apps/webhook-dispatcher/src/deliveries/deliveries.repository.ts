import { Injectable } from '@nestjs/common';
import { columns, GroupBatcher, Sql } from '@svc/platform';
import type { DeliveryAttemptRow, DeliveryRow, DeliveryStatus } from './delivery.entity';

export type { DeliveryStatus };

export type NewDelivery = Pick<
  DeliveryRow,
  'deliveryId' | 'eventId' | 'eventType' | 'userId' | 'clientId' | 'targetUrl' | 'body'
>;

export type Delivery = NewDelivery & Pick<DeliveryRow, 'status' | 'attempts' | 'firstAttemptAt'>;

/** One attempt and where it leaves the delivery: `targetUrl` is where it went. */
export type AttemptRecord = DeliveryAttemptRow & Pick<DeliveryRow, 'targetUrl' | 'status'>;

/** A delivery as the operators' log shows it (no body). */
export type LoggedDelivery = Omit<DeliveryRow, 'body' | 'firstAttemptAt'>;

export type LoggedAttempt = Omit<DeliveryAttemptRow, 'deliveryId'>;

const LOGGED_COLUMNS = `delivery_id AS "deliveryId", event_id AS "eventId", event_type AS "eventType",
  user_id AS "userId", client_id AS "clientId", target_url AS "targetUrl", status, attempts,
  created_at AS "createdAt", next_attempt_at AS "nextAttemptAt", redelivery_of AS "redeliveryOf"`;

const COLUMNS = `delivery_id AS "deliveryId", event_id AS "eventId", event_type AS "eventType",
  user_id AS "userId", client_id AS "clientId", target_url AS "targetUrl", body, status, attempts,
  first_attempt_at AS "firstAttemptAt"`;

@Injectable()
export class DeliveriesRepository {
  constructor(private readonly sql: Sql) {}

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
    const rows = await this.sql.prepared<Delivery>(
      'create-for-events',
      `WITH created AS (
         INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         ON CONFLICT (event_id, client_id) WHERE redelivery_of IS NULL DO NOTHING
         RETURNING ${COLUMNS})
       SELECT * FROM created
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
    const moved = await this.sql.prepared<Pick<DeliveryAttemptRow, 'deliveryId'>>(
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
       RETURNING delivery_id AS "deliveryId"`,
      columns(unique, [
        'deliveryId',
        'attempt',
        'status',
        'nextAttemptAt',
        'startedAt',
        'durationMs',
        'statusCode',
        'error',
        'targetUrl',
      ]),
    );
    const counted = new Set(moved.map((m) => m.deliveryId));
    return batch.map((r, i) => firstOf.get(r.deliveryId) === i && counted.has(r.deliveryId));
  });

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
              next_attempt_at AS "nextAttemptAt"
         FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`,
      [deliveryId],
    );
  }

  /**
   * A new delivery repeating `sourceId`: same event, partner, target and body bytes, no attempts
   * yet. Null when the source does not exist.
   */
  async createRedelivery(sourceId: string, deliveryId: string): Promise<LoggedDelivery | null> {
    return this.sql.row<LoggedDelivery>(
      `INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body,
                               redelivery_of)
       SELECT $2, event_id, event_type, user_id, client_id, target_url, body, delivery_id
         FROM deliveries WHERE delivery_id = $1
       RETURNING ${LOGGED_COLUMNS}`,
      [sourceId, deliveryId],
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

  /** Removes a delivery that never had an attempt (a redelivery whose message was refused). */
  async deleteUnattempted(deliveryId: string): Promise<void> {
    await this.sql.affected(`DELETE FROM deliveries WHERE delivery_id = $1 AND attempts = 0`, [deliveryId]);
  }
}
