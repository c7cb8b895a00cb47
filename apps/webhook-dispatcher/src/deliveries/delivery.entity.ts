/**
 * `failed`: given up (no attempt left); `skipped`: recorded while the partner's endpoint was
 * disabled and never attempted. Partners see `pending` with attempts as `failed` (retrying) and
 * `failed` as `given_up` (partner-webhooks/dto/delivery.response.ts).
 */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'skipped';

/** Why a delivery was given up: the schedule ran out, the receiver answered 410, or the partner stopped receiving. */
export type GiveUpReason = 'attempts_exhausted' | 'gone' | 'not_a_recipient';

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
  /** The delivery this one repeats (an operator's or partner's redelivery, or a replay), or null. */
  readonly redeliveryOf: string | null;
  /** Set when `status` is `failed`. */
  readonly giveUpReason: GiveUpReason | null;
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
  /** The first RESPONSE_BODY_KEPT bytes of the answer, as text; null when nothing was read. */
  readonly responseBody: string | null;
}

/** The error an attempt records when the partner no longer receives the event (no request went out). */
export const NOT_A_RECIPIENT_ERROR = 'partner no longer receives webhooks';

export type EndpointStatus = 'enabled' | 'disabled';

/**
 * A row of `webhook_endpoints`: one partner endpoint's health, written by the statement that
 * records attempts, and whether the fan-out attempts it (disabled: new events are `skipped`).
 * No row yet: enabled, never attempted.
 */
export interface WebhookEndpointRow {
  readonly clientId: string;
  readonly status: EndpointStatus;
  readonly disabledAt: Date | null;
  /** `failing`: auto-disabled after WEBHOOK_DISABLE_AFTER of failures only; `operator`: by the CLI. */
  readonly disabledReason: string | null;
  readonly lastSuccessAt: Date | null;
  readonly lastFailureAt: Date | null;
  /** The first failed attempt since the last success; null while the latest attempt succeeded. */
  readonly failingSince: Date | null;
}
