import { createHash, randomBytes } from 'node:crypto';
import { isWellFormedAccessToken } from '@svc/contracts';
import { AccessTokenDerivation } from './access-token-derivation';

const key = () => randomBytes(32).toString('base64');

describe('AccessTokenDerivation', () => {
  it('gives a well-formed access token, the same one for the same refresh token and key', () => {
    const derivation = new AccessTokenDerivation(key());
    const refresh = `rt_${randomBytes(32).toString('base64url')}`;
    const access = derivation.accessTokenFor(refresh);
    expect(isWellFormedAccessToken(access)).toBe(true);
    expect(derivation.accessTokenFor(refresh)).toBe(access);
  });

  it('gives another token under another key, and for another refresh token', () => {
    const secretsKey = key();
    const refresh = `rt_${randomBytes(32).toString('base64url')}`;
    const access = new AccessTokenDerivation(secretsKey).accessTokenFor(refresh);
    expect(new AccessTokenDerivation(key()).accessTokenFor(refresh)).not.toBe(access);
    expect(new AccessTokenDerivation(secretsKey).accessTokenFor(`${refresh}x`)).not.toBe(access);
  });

  it('is not the refresh token hashed without the key (a stolen refresh token does not give it)', () => {
    const refresh = `rt_${randomBytes(32).toString('base64url')}`;
    const access = new AccessTokenDerivation(key()).accessTokenFor(refresh);
    expect(access.slice(3)).not.toBe(createHash('sha256').update(refresh).digest('base64url'));
  });
});
