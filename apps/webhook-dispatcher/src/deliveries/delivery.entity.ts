export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A row of `deliveries`: one event for one partner, and where its attempts stand. */
export interface DeliveryRow {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly userId: string;
  readonly clientId: string;
  /** Where the next attempt goes: the partner's registered URL as of the last attempt. */
  readonly targetUrl: string;
  /** The exact bytes signed and sent on every attempt. */
  readonly body: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly firstAttemptAt: Date | null;
  /** Null when there is no further attempt. */
  readonly nextAttemptAt: Date | null;
  readonly createdAt: Date;
  /** The delivery this one repeats (an operator's redelivery), or null. */
  readonly redeliveryOf: string | null;
}

/** A row of `delivery_attempts`: one attempt of a delivery, as the operators' log shows it. */
export interface DeliveryAttemptRow {
  readonly deliveryId: string;
  readonly attempt: number;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  /** Null when there is no further attempt. */
  readonly nextAttemptAt: Date | null;
}
