/** Topic exchange of crew-record events; the routing key is the event type. */
export const CREW_EVENTS_EXCHANGE = 'crew.events';

/**
 * The message every webhook event (EVENT_TYPES) goes in on `crew.events`: a pack of one or more
 * events of one routing key, as many as the outbox relay claimed in one pass, up to
 * EVENTS_PER_MESSAGE. RabbitMQ, the relay and webhook-dispatcher then pay their per-message work
 * once per pack. Internal events (`crew.member.registered`) go one to a plain message: told apart by
 * this content type. Each entry keeps what a message of its own would have carried: its message id
 * (consumers dedupe on it) and the trace context of the transaction that wrote it.
 */
export const EVENT_BATCH_CONTENT_TYPE = 'application/vnd.svc.event-batch+json';
/** Most events the outbox relays pack into one message. */
export const EVENTS_PER_MESSAGE = 20;
/** Most events in one batch message: what a consumer holds unacked for one message stays bounded. */
export const EVENT_BATCH_MAX_EVENTS = 100;

export interface EventBatchEntry {
  readonly message_id: string;
  /** W3C traceparent of the transaction that wrote the event, when it ran under a trace. */
  readonly traceparent?: string;
  /** The event, as a message of its own would carry it (validated by the consumer). */
  readonly payload: unknown;
}

export interface EventBatch {
  readonly events: readonly EventBatchEntry[];
}

export const EVENT_TYPES = [
  'user.profile.updated',
  'user.sea_time.updated',
  'user.vessels.updated',
  'user.consent.revoked',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The message every event carries on `crew.events` (routing key = `type`). The webhook body is
 * built from it; `client_id` names the one partner concerned by `user.consent.revoked` and
 * `webhook.test`.
 */
export interface ServiceEvent {
  readonly id: string;
  readonly type: EventType;
  readonly user_id: string;
  /** ISO 8601 UTC. */
  readonly created_at: string;
  readonly client_id?: string;
  /**
   * `webhook.test` only: the delivery id the crew-data API already answered the partner with, so
   * the dispatcher records the delivery under it. Never part of the webhook body.
   */
  readonly delivery_id?: string;
}
