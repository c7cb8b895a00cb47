import { ACCESS_TOKEN_PREFIX, isWellFormedAccessToken } from '@svc/contracts';
import { scryptSync } from 'node:crypto';
import { newSecret } from '@svc/platform';
import {
  DEFAULT_PASSWORD_HASH_COST,
  hashingSlots,
  PasswordHasher,
  pkceChallenge,
  scryptParams,
  SecretBox,
} from './secrets';

/** Hashes as the code of before the cost was configurable wrote them: N=2^15 with Node's scrypt. */
function legacyHash(password: string): string {
  const salt = Buffer.alloc(16, 3);
  const key = scryptSync(password, salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return `scrypt$32768$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

describe('credential primitives', () => {
  it('mints access tokens of the exact shape resource apps accept before any lookup', () => {
    for (let i = 0; i < 200; i++) expect(isWellFormedAccessToken(newSecret(ACCESS_TOKEN_PREFIX))).toBe(true);
  });

  it('computes the RFC 7636 appendix B S256 challenge', () => {
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('hashes passwords with scrypt at the configured cost and verifies them', async () => {
    const hasher = new PasswordHasher(12);
    const hash = await hasher.hash('sandbox-password');
    expect(hash).toMatch(/^scrypt\$4096\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(hash).not.toContain('sandbox-password');
    await expect(hasher.verify('sandbox-password', hash)).resolves.toBe(true);
    await expect(hasher.verify('sandbox-passwore', hash)).resolves.toBe(false);
    await expect(hasher.verify('sandbox-password', 'plain')).resolves.toBe(false);
  });

  it('defaults to OWASP scrypt parameters, N=2^17, r=8, p=1', () => {
    expect(DEFAULT_PASSWORD_HASH_COST).toBe(17);
    const hasher = new PasswordHasher();
    expect(hasher.params).toEqual({ N: 131072, r: 8, p: 1 });
    // The dummy hash of unknown e-mails costs what a member's does.
    expect(hasher.dummyHash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(new PasswordHasher(14).dummyHash).toMatch(/^scrypt\$16384\$8\$1\$/);
  });

  it('verifies at 2^17 (maxmem allows 128 MiB)', async () => {
    const hasher = new PasswordHasher(17);
    const hash = await hasher.hash('pw');
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    await expect(hasher.verify('pw', hash)).resolves.toBe(true);
  }, 30_000);

  it('still verifies hashes of the old format (N=2^15) and marks only weaker ones for rehashing', async () => {
    const old = legacyHash('old-password');
    const hasher = new PasswordHasher(16);
    await expect(hasher.verify('old-password', old)).resolves.toBe(true);
    await expect(hasher.verify('other', old)).resolves.toBe(false);
    expect(hasher.needsRehash(old)).toBe(true);
    expect(new PasswordHasher(15).needsRehash(old)).toBe(false);
    // Stronger than current: kept, never downgraded.
    expect(new PasswordHasher(12).needsRehash(old)).toBe(false);
    expect(hasher.needsRehash('garbage')).toBe(true);
  });

  it('refuses stored parameters a replica cannot afford instead of running them', async () => {
    const hasher = new PasswordHasher(12);
    const good = await hasher.hash('pw');
    const [, , r, p, salt, key] = good.split('$');
    for (const n of [String(2 ** 19), '1000', 'x', '0']) {
      await expect(hasher.verify('pw', ['scrypt', n, r, p, salt, key].join('$'))).resolves.toBe(false);
    }
  });

  it('sizes the hashing queue so that its last place finishes inside the RPC timeout', () => {
    // 2 running at every cost; waiting places double per step below the default, at most 16.
    const places = (cost: number) => (hashingSlots(cost) as unknown as { waiting: number }).waiting;
    expect(places(17)).toBe(2);
    expect(places(16)).toBe(4);
    expect(places(14)).toBe(16);
    expect(places(10)).toBe(16);
    expect(() => scryptParams(19)).toThrow();
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
