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
         ON CONFLICT (event_id, client_id) DO NOTHING`,
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
        WHERE event_id = $1 AND status = 'pending' AND attempts = 0 ORDER BY client_id`,
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
