import { loadConfig } from '../config/config';
import { addressLimitKey, CLIENT_IPV6_PREFIX } from './address-key';

describe('addressLimitKey', () => {
  it('keeps an IPv4 address whole, and anything that is not an address as it is', () => {
    expect(addressLimitKey('203.0.113.7', 64)).toBe('203.0.113.7');
    expect(addressLimitKey('unknown', 64)).toBe('unknown');
    expect(addressLimitKey('2001:db8::1::2', 64)).toBe('2001:db8::1::2');
    expect(addressLimitKey(undefined, 64)).toBeUndefined();
  });

  it('cuts an IPv6 address to its /64: two addresses of one /64 share a key, of two /64s do not', () => {
    const a = addressLimitKey('2001:db8:1:2::1', 64);
    expect(a).toBe('2001:db8:1:2:0:0:0:0/64');
    expect(addressLimitKey('2001:db8:1:2:ffff:ffff:ffff:fffe', 64)).toBe(a);
    expect(addressLimitKey('2001:db8:1:3::1', 64)).not.toBe(a);
  });

  it('gives every spelling of one network the same key (case, zeros, ::, a zone id)', () => {
    const key = '2001:db8:0:0:0:0:0:0/64';
    for (const spelling of [
      '2001:db8::',
      '2001:DB8::5',
      '2001:0db8:0000:0000:0001:0000:0000:0000',
      '2001:db8:0:0::7',
      '2001:db8::9%eth0',
    ])
      expect(addressLimitKey(spelling, 64)).toBe(key);
  });

  it('reads a dotted IPv4 tail, and keys an IPv4-mapped address as the IPv4 address it maps', () => {
    expect(addressLimitKey('::ffff:203.0.113.7', 64)).toBe('203.0.113.7');
    expect(addressLimitKey('::FFFF:cb00:7107', 64)).toBe('203.0.113.7');
    expect(addressLimitKey('64:ff9b::203.0.113.7', 96)).toBe('64:ff9b:0:0:0:0:0:0/96');
    expect(addressLimitKey('1::203.0.113.7', 128)).toBe('1:0:0:0:0:0:cb00:7107/128');
  });

  it('honours other prefix lengths, on and off group boundaries', () => {
    const address = '2001:db8:abcd:12ff:1:2:3:4';
    expect(addressLimitKey(address, 48)).toBe('2001:db8:abcd:0:0:0:0:0/48');
    expect(addressLimitKey(address, 56)).toBe('2001:db8:abcd:1200:0:0:0:0/56');
    expect(addressLimitKey(address, 32)).toBe('2001:db8:0:0:0:0:0:0/32');
    expect(addressLimitKey(address, 128)).toBe('2001:db8:abcd:12ff:1:2:3:4/128');
  });
});

describe('CLIENT_IPV6_PREFIX', () => {
  const read = (value?: string) => loadConfig({ CLIENT_IPV6_PREFIX }, { CLIENT_IPV6_PREFIX: value });

  it('defaults to 64 and takes whole bytes from 32 to 128', () => {
    expect(read().CLIENT_IPV6_PREFIX).toBe(64);
    for (const ok of ['32', '48', '56', '128']) expect(read(ok).CLIENT_IPV6_PREFIX).toBe(Number(ok));
  });

  it('refuses anything else at start-up', () => {
    for (const bad of ['60', '24', '136', '0', 'x', '64.0', '-64'])
      expect(() => read(bad)).toThrow(/CLIENT_IPV6_PREFIX must be a multiple of 8 from 32 to 128/);
  });
});
