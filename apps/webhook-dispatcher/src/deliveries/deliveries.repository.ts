import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@svc/platform';

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
  constructor(private readonly transactions: TransactionRunner) {}

  /**
   * Inserts the deliveries of one event, skipping partners that already have one (a redelivered
   * event), and returns every delivery of the event that has not had an attempt yet: those still
   * need their message on the delivery queue.
   */
  async createForEvent(eventId: string, deliveries: readonly NewDelivery[]): Promise<Delivery[]> {
    if (deliveries.length > 0) {
      await this.transactions.outside.query(
        `INSERT INTO deliveries (delivery_id, event_id, event_type, user_id, client_id, target_url, body)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         ON CONFLICT (event_id, client_id) WHERE redelivery_of IS NULL DO NOTHING`,
        [
          deliveries.map((d) => d.deliveryId),
          deliveries.map((d) => d.eventId),
          deliveries.map((d) => d.eventType),
          deliveries.map((d) => d.userId),
          deliveries.map((d) => d.clientId),
          deliveries.map((d) => d.targetUrl),
          deliveries.map((d) => d.body),
        ],
      );
    }
    const rows = await this.transactions.outside.query<Row[]>(
      `SELECT ${COLUMNS} FROM deliveries
        WHERE event_id = $1 AND status = 'pending' AND attempts = 0 AND redelivery_of IS NULL
        ORDER BY client_id`,
      [eventId],
    );
    return rows.map(toDelivery);
  }

  async findById(deliveryId: string): Promise<Delivery | null> {
    const rows = await this.transactions.outside.query<Row[]>(
      `SELECT ${COLUMNS} FROM deliveries WHERE delivery_id = $1`,
      [deliveryId],
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  /**
   * Logs attempt `attempt` and moves the delivery on, in one transaction. Only the first recording
   * of an attempt counts: a duplicate message that ran the same attempt returns false, and must not
   * schedule another.
   */
  async recordAttempt(record: AttemptRecord): Promise<boolean> {
    return this.transactions.run(async (tx) => {
      const updated = await tx.query<[unknown[], number]>(
        `UPDATE deliveries
            SET attempts = $2, status = $3, next_attempt_at = $4,
                first_attempt_at = COALESCE(first_attempt_at, $5)
          WHERE delivery_id = $1 AND attempts = $2 - 1 AND status = 'pending'`,
        [record.deliveryId, record.attempt, record.status, record.nextAttemptAt, record.startedAt],
      );
      if (updated[1] !== 1) return false;
      await tx.query(
        `INSERT INTO delivery_attempts
           (delivery_id, attempt, started_at, duration_ms, status_code, error, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          record.deliveryId,
          record.attempt,
          record.startedAt,
          record.durationMs,
          record.statusCode,
          record.error,
          record.nextAttemptAt,
        ],
      );
      return true;
    });
  }

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
