import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  duration,
  int,
  REDIS_CONFIG,
  type ConfigOf,
} from '@svc/platform';
import { FAILED_AUTH_CONFIG, RATE_LIMIT_CONFIG } from '@svc/security';

export const SPONSORSHIP_API_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...REDIS_CONFIG,
  ...AMQP_CONFIG,
  ...RATE_LIMIT_CONFIG,
  ...FAILED_AUTH_CONFIG,
  SEAT_QUOTA: int('live seats (invited + active) one partner may hold, unless its sponsor row sets its own', {
    default: '100000',
    min: 0,
    max: 10_000_000,
  }),
  SEAT_TERM_MONTHS: int('sponsored term of a seat provisioned without expires_at, in months', {
    default: '12',
    min: 1,
    max: 120,
  }),
  SPONSORSHIP_PROBE_BUDGET_PER_DAY: int(
    'seats of crew members a partner may close within 24 h of provisioning them, per rolling 24 h, before its new provisions are refused (429)',
    { default: '100', min: 1, max: 1_000_000 },
  ),
  SEAT_RETENTION_DAYS: int(
    'days a closed seat (ended or cancelled) and its history (seat_events) are kept after it closed before they are pruned',
    { default: '730', min: 1, max: 3650 },
  ),
  SEAT_EXPIRY_INTERVAL: duration('how often each replica ends seats past their expires_at (0s: never)', {
    default: '1m',
  }),
};

export type SponsorshipApiConfig = ConfigOf<typeof SPONSORSHIP_API_CONFIG>;
