import { digestSessionId, isRandomToken, randomToken, sessionCsrfToken } from './secrets';

describe('session secrets', () => {
  it('makes distinct 256-bit base64url tokens', () => {
    const a = randomToken();
    const b = randomToken();
    expect(isRandomToken(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
  });

  it('refuses anything that is not such a token', () => {
    for (const bad of [undefined, 42, '', 'short', `${randomToken()}x`, `${randomToken().slice(1)}!`]) {
      expect(isRandomToken(bad)).toBe(false);
    }
  });

  it('stores a SHA-256 digest, never the session id', () => {
    const id = randomToken();
    expect(digestSessionId(id)).toMatch(/^[0-9a-f]{64}$/);
    expect(digestSessionId(id)).not.toContain(id);
    expect(digestSessionId(id)).toBe(digestSessionId(id));
  });

  it('binds the CSRF token to both the session id and the session secret', () => {
    const secret = randomToken();
    const id = randomToken();
    const token = sessionCsrfToken(secret, id);
    expect(token).toBe(sessionCsrfToken(secret, id));
    expect(token).not.toBe(sessionCsrfToken(secret, randomToken()));
    expect(token).not.toBe(sessionCsrfToken(randomToken(), id));
  });
});
