import { createHash } from 'node:crypto';
import { tokenDigest } from './token-digest';

describe('tokenDigest', () => {
  it('is the lower-case hex SHA-256 of the token (FIPS 180-4 test vector)', () => {
    expect(tokenDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes the UTF-8 bytes and always gives 64 hex characters', () => {
    const token = 'at_Zm9vYmFy-_~.+/=';
    expect(tokenDigest(token)).toBe(createHash('sha256').update(Buffer.from(token, 'utf8')).digest('hex'));
    expect(tokenDigest(token)).toMatch(/^[0-9a-f]{64}$/);
  });
});
