import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  int,
  OUTBOX_CONFIG,
  REDIS_CONFIG,
  secret,
  str,
  url,
} from '@svc/platform';
import { SANDBOX_DEFAULT_WEBHOOK_URL } from '@svc/contracts';

export const AUTH_SERVER_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...REDIS_CONFIG,
  ...AMQP_CONFIG,
  ...OUTBOX_CONFIG,
  AUTH_CODE_TTL_SECONDS: int('lifetime of an authorization code', { default: '60', min: 1, max: 600 }),
  ACCESS_TOKEN_TTL_SECONDS: int('lifetime of an access token', { default: '3600', min: 1 }),
  REFRESH_TOKEN_TTL_SECONDS: int('lifetime of a refresh token', { default: '7776000', min: 60 }),
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
  WEBHOOK_DISPATCHER_AMQP_USER: str(
    "the webhook dispatcher's RabbitMQ user: the only caller given partners' signing secrets",
    { default: 'svc-webhook-dispatcher' },
  ),
  SANDBOX_WEBHOOK_URL: url('webhook URL of the seeded sandbox partner', ['http', 'https'], {
    default: SANDBOX_DEFAULT_WEBHOOK_URL,
  }),
};
