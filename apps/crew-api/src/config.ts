import {
  AMQP_CONFIG,
  BASE_CONFIG,
  int,
  DATABASE_CONFIG,
  OUTBOX_CONFIG,
  REDIS_CONFIG,
  secret,
  type ConfigOf,
} from '@svc/platform';
import { ACCESS_READS_CONFIG, FAILED_AUTH_CONFIG, RATE_LIMIT_CONFIG } from '@svc/security';

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
  /**
   * The HMAC-SHA256 key that makes `/v1/me/vessels` cursors tamper-evident (docs/rules.md, Crew
   * records). Sandbox has a fixed default; production has none, so a replica cannot start with a
   * key an attacker knows. Every replica must share the key, or a cursor issued by one is refused
   * by another.
   */
  CURSOR_SIGNING_KEY: secret('HMAC-SHA256 key of the vessel-history cursors', {
    sandboxDefault: 'sandbox-only-cursor-signing-key-0123456789',
    minLength: MIN_CURSOR_KEY_LENGTH,
    check(value) {
      // Even the sandbox refuses a short key set by hand: it would be a weak key everywhere.
      if (value.length < MIN_CURSOR_KEY_LENGTH)
        throw new Error(`must be at least ${MIN_CURSOR_KEY_LENGTH} characters`);
    },
  }),
  /**
   * Vessel-history pages each replica keeps in memory (a page of 50 periods is ~30 kB of heap with
   * its JSON bytes, made once per kept page). A snapshot's pages never change, so nothing
   * invalidates them; 0 reads every page from the database.
   */
  VESSEL_PAGE_CACHE_ENTRIES: int('vessel-history pages kept per replica', {
    default: '500',
    min: 0,
    max: 100000,
  }),
  /**
   * Sea-time totals and trends each replica keeps in memory, by record version (~2 kB of heap each
   * with their JSON bytes). A version's answers never change, so nothing invalidates them; 0
   * aggregates every answer in the database.
   */
  SEA_TIME_CACHE_ENTRIES: int('sea-time totals and trends kept per replica', {
    default: '2000',
    min: 0,
    max: 100000,
  }),
};

export type CrewApiConfig = ConfigOf<typeof CREW_API_CONFIG>;
