/** Topic exchange of crew-record events; the routing key is the event type. */
export const CREW_EVENTS_EXCHANGE = 'crew.events';

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
