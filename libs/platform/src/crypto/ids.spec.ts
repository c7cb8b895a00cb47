import { newId, newSecret } from './ids';

describe('newId', () => {
  it('is the prefix, an underscore and 15 random bytes in base64url (20 characters)', () => {
    const a = newId('evt');
    expect(a).toMatch(/^evt_[A-Za-z0-9_-]{20}$/);
    expect(newId('evt')).not.toBe(a);
    expect(newId('sps')).toMatch(/^sps_[A-Za-z0-9_-]{20}$/);
  });

  it('keeps 22 characters where 16 bytes are asked for', () => {
    expect(newId('dlv', 16)).toMatch(/^dlv_[A-Za-z0-9_-]{22}$/);
  });
});

describe('newSecret', () => {
  it('is the prefix and 256 random bits in base64url (43 characters)', () => {
    const a = newSecret('cs_');
    expect(a).toMatch(/^cs_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(3), 'base64url')).toHaveLength(32);
    expect(newSecret('cs_')).not.toBe(a);
    expect(newSecret()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('the random pool behind ids and secrets', () => {
  it('never hands out the same bytes twice, across many refills of the pool', () => {
    const secrets = Array.from({ length: 2000 }, () => newSecret());
    const ids = Array.from({ length: 2000 }, () => newId('tkp', 16));
    expect(new Set(secrets).size).toBe(secrets.length);
    expect(new Set(ids).size).toBe(ids.length);
    // A zeroed, already-issued stretch handed out again would be all zeros.
    const zeroSecret = Buffer.alloc(32).toString('base64url');
    expect(secrets).not.toContain(zeroSecret);
  });
});
