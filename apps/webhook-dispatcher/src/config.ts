import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  duration,
  durationList,
  int,
  type ConfigOf,
} from '@svc/platform';

export const WEBHOOK_DISPATCHER_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...AMQP_CONFIG,
  WEBHOOK_RETRY_SCHEDULE: durationList(
    'delays between a failed attempt and the next (decisions.md, Webhooks), e.g. 1m,5m,30m,2h,6h',
    { default: '1m,5m,30m,2h,6h' },
  ),
  WEBHOOK_TIMEOUT_MS: int('budget of one delivery attempt: connect, headers and body', {
    default: '5000',
    min: 100,
    max: 60_000,
  }),
  WEBHOOK_GIVE_UP_AFTER: duration('no attempt later than this after the first', { default: '24h' }),
};

export type WebhookDispatcherConfig = ConfigOf<typeof WEBHOOK_DISPATCHER_CONFIG>;
