import { newSecret } from '@svc/platform';
import { digestSessionId, isRandomToken, sessionCsrfToken } from './secrets';

describe('session secrets', () => {
  it('accepts every session id and CSRF secret a session is given', () => {
    for (let i = 0; i < 200; i++) expect(isRandomToken(newSecret())).toBe(true);
  });

  it('refuses anything that is not such a token', () => {
    for (const bad of [undefined, 42, '', 'short', `${newSecret()}x`, `${newSecret().slice(1)}!`]) {
      expect(isRandomToken(bad)).toBe(false);
    }
  });

  it('stores a SHA-256 digest, never the session id', () => {
    const id = newSecret();
    expect(digestSessionId(id)).toMatch(/^[0-9a-f]{64}$/);
    expect(digestSessionId(id)).not.toContain(id);
    expect(digestSessionId(id)).toBe(digestSessionId(id));
  });

  it('binds the CSRF token to both the session id and the session secret', () => {
    const secret = newSecret();
    const id = newSecret();
    const token = sessionCsrfToken(secret, id);
    expect(token).toBe(sessionCsrfToken(secret, id));
    expect(token).not.toBe(sessionCsrfToken(secret, newSecret()));
    expect(token).not.toBe(sessionCsrfToken(newSecret(), id));
  });
});
