import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  int,
  OUTBOX_CONFIG,
  REDIS_CONFIG,
  secret,
  url,
  type VarSpec,
  ACCESS_READS_CONFIG,
} from '@svc/platform';
import { SANDBOX_DEFAULT_WEBHOOK_URL } from '@svc/contracts';
import { FAILED_AUTH_CONFIG, RATE_LIMIT_CONFIG } from '@svc/security';
import { DEFAULT_PASSWORD_HASH_COST, MAX_PASSWORD_HASH_COST } from './crypto/secrets';

/** The lowest cost the sandbox accepts (the test system's, to keep the suites fast). */
export const MIN_SANDBOX_PASSWORD_HASH_COST = 10;

/** Production refuses less than the default (OWASP's minimum), so a copied test setting cannot weaken it. */
function passwordHashCostVar(): VarSpec<number> {
  const spec = int('log2 of scrypt N for password hashes (r=8, p=1)', {
    default: String(DEFAULT_PASSWORD_HASH_COST),
    max: MAX_PASSWORD_HASH_COST,
  });
  return {
    description: `${spec.description}; production: at least ${DEFAULT_PASSWORD_HASH_COST}`,
    parse(raw, appEnv, env) {
      const cost = spec.parse(raw, appEnv, env);
      const min = appEnv === 'production' ? DEFAULT_PASSWORD_HASH_COST : MIN_SANDBOX_PASSWORD_HASH_COST;
      if (cost < min) throw new Error(`must be >= ${min}${appEnv === 'production' ? ' in production' : ''}`);
      return cost;
    },
  };
}

export const AUTH_SERVER_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...REDIS_CONFIG,
  ...AMQP_CONFIG,
  ...OUTBOX_CONFIG,
  // The per-partner limits of every /v1/* route: auth-server serves one (portal links).
  ...RATE_LIMIT_CONFIG,
  ...FAILED_AUTH_CONFIG,
  ...ACCESS_READS_CONFIG,
  PASSWORD_HASH_COST: passwordHashCostVar(),
  // The sandbox is generous for the reason FAILED_AUTH_CONFIG gives: a partner's test suite signs in
  // from one address, wrong passwords included, and must never be locked out of every account.
  SIGN_IN_FAILURES_PER_ADDRESS: int(
    'failed sign-ins one client address may make across all accounts per 15 min before its sign-ins are refused (429)',
    { default: '30', sandboxDefault: '1000', min: 1, max: 1_000_000 },
  ),
  AUTH_CODE_TTL_SECONDS: int('lifetime of an authorization code', { default: '60', min: 1, max: 600 }),
  ACCESS_TOKEN_TTL_SECONDS: int('lifetime of an access token', { default: '3600', min: 1 }),
  REFRESH_TOKEN_TTL_SECONDS: int('lifetime of a refresh token', { default: '7776000', min: 60 }),
  REFRESH_TOKEN_REUSE_GRACE_SECONDS: int(
    'seconds after a rotation in which the previous refresh token may be presented again (a lost response) and gets a new pair instead of ending its family; 0 disables',
    { default: '10', min: 0, max: 300 },
  ),
  SECRETS_ENCRYPTION_KEY: secret(
    'base64 of 32 random bytes; seals partners\u2019 webhook signing secrets at rest (AES-256-GCM)',
    {
      // A fixed key is acceptable only for the sandbox's well-known secrets.
      sandboxDefault: 'c2FuZGJveC1vbmx5LWtleS1mb3Itd2ViaG9vay1zZWM=',
      minLength: 44,
      check(value) {
        if (Buffer.from(value, 'base64').length !== 32 || !/^[A-Za-z0-9+/]{43}=$/.test(value)) {
          throw new Error('must be base64 of exactly 32 bytes (e.g. `openssl rand -base64 32`)');
        }
      },
    },
  ),
  SANDBOX_WEBHOOK_URL: url('webhook URL of the seeded sandbox partner', ['http', 'https'], {
    default: SANDBOX_DEFAULT_WEBHOOK_URL,
  }),
};
