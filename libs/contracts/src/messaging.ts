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
