import { Module } from '@nestjs/common';
import { APP_CONFIG, type ConfigOf } from '@svc/platform';
import type { AUTH_SERVER_CONFIG } from '../config';
import { PasswordHasher, SecretBox } from './secrets';

type Config = ConfigOf<typeof AUTH_SERVER_CONFIG>;

@Module({
  providers: [
    {
      provide: SecretBox,
      inject: [APP_CONFIG],
      useFactory: (config: Config) => new SecretBox(config.SECRETS_ENCRYPTION_KEY),
    },
    {
      // One per app: its hashing slots bound every password hash the app runs.
      provide: PasswordHasher,
      inject: [APP_CONFIG],
      useFactory: (config: Config) => new PasswordHasher(config.PASSWORD_HASH_COST),
    },
  ],
  exports: [SecretBox, PasswordHasher],
})
export class CryptoModule {}
