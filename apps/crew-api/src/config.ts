import {
  AMQP_CONFIG,
  BASE_CONFIG,
  int,
  DATABASE_CONFIG,
  OUTBOX_CONFIG,
  REDIS_CONFIG,
  secret,
  type ConfigOf,
  ACCESS_READS_CONFIG,
} from '@svc/platform';
import { FAILED_AUTH_CONFIG, RATE_LIMIT_CONFIG } from '@svc/security';

/** The shortest HMAC key accepted: 32 characters, as many bytes as the SHA-256 output. */
const MIN_CURSOR_KEY_LENGTH = 32;

export const CREW_API_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...REDIS_CONFIG,
  ...AMQP_CONFIG,
  ...OUTBOX_CONFIG,
  ...RATE_LIMIT_CONFIG,
  ...FAILED_AUTH_CONFIG,
  ...ACCESS_READS_CONFIG,
  INTERNAL_API_TOKEN: secret('bearer token of the internal records API', {
    sandboxDefault: 'sandbox-internal-token',
    minLength: 32,
  }),
  /** Signs `/v1/me/vessels` cursors; shared by every replica; no production default, so no known key. */
  CURSOR_SIGNING_KEY: secret('HMAC-SHA256 key of the vessel-history cursors', {
    sandboxDefault: 'sandbox-only-cursor-signing-key-0123456789',
    minLength: MIN_CURSOR_KEY_LENGTH,
    check(value) {
      // Even the sandbox refuses a short key set by hand: it would be a weak key everywhere.
      if (value.length < MIN_CURSOR_KEY_LENGTH)
        throw new Error(`must be at least ${MIN_CURSOR_KEY_LENGTH} characters`);
    },
  }),
  /** Vessel-history pages each replica keeps (~30 kB a 50-period page); 0 reads every page from the database. */
  VESSEL_PAGE_CACHE_ENTRIES: int('vessel-history pages kept per replica', {
    default: '500',
    min: 0,
    max: 100000,
  }),
  /** Sea-time answers each replica keeps by record version (~2 kB each); 0 aggregates every answer in the database. */
  SEA_TIME_CACHE_ENTRIES: int('sea-time totals and trends kept per replica', {
    default: '2000',
    min: 0,
    max: 100000,
  }),
};

export type CrewApiConfig = ConfigOf<typeof CREW_API_CONFIG>;
