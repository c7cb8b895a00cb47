import { createHmac, hkdfSync } from 'node:crypto';
import { ACCESS_TOKEN_PREFIX } from '@svc/contracts';

/**
 * A pair's access token is derived from its refresh token: `at_` and base64url(HMAC-SHA256(key,
 * refresh token)), 43 characters like any random one. So a refresh can tombstone the old access
 * token before its single statement commits, without first asking the database which one it is
 * (docs/architecture.md, "Token endpoint"). Without the key, a refresh token tells nothing about
 * its access token; an access token never tells anything about its refresh token (HMAC is one-way).
 * The key is derived from SECRETS_ENCRYPTION_KEY for this one use (HKDF, its own label); when that
 * key changes, tokens minted before simply take the slower path whose tombstone comes from the row.
 */
export class AccessTokenDerivation {
  private readonly key: Buffer;

  constructor(secretsKeyBase64: string) {
    this.key = Buffer.from(
      hkdfSync('sha256', Buffer.from(secretsKeyBase64, 'base64'), Buffer.alloc(0), LABEL, 32),
    );
  }

  accessTokenFor(refreshToken: string): string {
    return `${ACCESS_TOKEN_PREFIX}${createHmac('sha256', this.key).update(refreshToken).digest('base64url')}`;
  }
}

const LABEL = 'auth-server: access token of a refresh token, v1';
