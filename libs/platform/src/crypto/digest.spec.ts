import { sha256Hex } from './digest';

describe('sha256Hex', () => {
  it('is the lower-case hex SHA-256 of the UTF-8 bytes (FIPS 180-2 test vector)', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toBe(sha256Hex('\u00e9'));
    expect(sha256Hex('é')).not.toBe(sha256Hex('e\u0301'));
    expect(sha256Hex('')).toMatch(/^[0-9a-f]{64}$/);
  });
});
