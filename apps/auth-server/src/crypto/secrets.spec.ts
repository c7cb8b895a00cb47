import { ACCESS_TOKEN_PREFIX, isWellFormedAccessToken } from '@svc/contracts';
import {
  constantTimeEqual,
  hashPassword,
  newSecret,
  pkceChallenge,
  SecretBox,
  sha256Hex,
  verifyPassword,
} from './secrets';

describe('credential primitives', () => {
  it('mints access tokens of the exact shape resource apps accept before any lookup', () => {
    for (let i = 0; i < 200; i++) expect(isWellFormedAccessToken(newSecret(ACCESS_TOKEN_PREFIX))).toBe(true);
  });

  it('computes the RFC 7636 appendix B S256 challenge', () => {
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('hashes passwords with scrypt and verifies them', async () => {
    const hash = await hashPassword('sandbox-password');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(hash).not.toContain('sandbox-password');
    await expect(verifyPassword('sandbox-password', hash)).resolves.toBe(true);
    await expect(verifyPassword('sandbox-passwore', hash)).resolves.toBe(false);
  });

  it('digests with SHA-256 and compares in constant time', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });

  it('seals and opens webhook secrets, and detects tampering', () => {
    const box = new SecretBox(Buffer.alloc(32, 7).toString('base64'));
    const sealed = box.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed)).toBe('whsec_abc');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_xyz').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox('c2hvcnQ=')).toThrow(/32 bytes/);
  });
});
