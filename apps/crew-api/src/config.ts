import { AMQP_CONFIG, BASE_CONFIG, DATABASE_CONFIG, REDIS_CONFIG, str } from '@svc/platform';

export const CREW_API_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...REDIS_CONFIG,
  ...AMQP_CONFIG,
  INTERNAL_API_TOKEN: str('bearer token of the internal records API; no default in production', {
    sandboxDefault: 'sandbox-internal-token',
  }),
};
