import { SPECIAL_PURPOSE_RANGES } from './special-purpose-addresses';
import { checkTarget, cidrRange, nonPublicKind } from './webhook-target';

// Generated from the table the guard reads: every row's first and last address is refused, by its
// own name (or a more specific row's listed before it), as an address and as a URL; so is every
// IPv6 spelling of an IPv4 row's addresses; and the addresses just outside a row are public unless
// another row (or, for IPv6, the space outside global unicast) takes them.

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const noDns = () => Promise.reject(new Error('no DNS in this test'));

function text(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  return [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((s) => ((value >> s) & 0xffffn).toString(16)).join(':');
}

const ROWS = SPECIAL_PURPOSE_RANGES.map((row) => ({ ...row, ...cidrRange(row.cidr) }));
const firstRowOf = (family: 4 | 6, value: bigint) =>
  ROWS.find((r) => r.family === family && value >= r.first && value <= r.last);
const GLOBAL_V6 = cidrRange('2000::/3');

const edges = ROWS.flatMap((row) =>
  [row.first, row.last].map((value) => ({
    cidr: row.cidr,
    address: text(row.family, value),
    family: row.family,
    value,
    kind: firstRowOf(row.family, value)?.name,
  })),
);

describe('SSRF guard: every special-purpose range of the IANA registries (table-generated)', () => {
  it.each(edges.map((e) => [e.address, e.cidr, e.kind] as const))(
    '%s (edge of %s) is refused as %s',
    async (address, _cidr, kind) => {
      expect(nonPublicKind(address)).toBe(kind);
      const host = address.includes(':') ? `[${address}]` : address;
      for (const env of ['production', 'sandbox'] as const) {
        if (env === 'sandbox' && kind === 'loopback') continue; // the sandbox's local receivers
        await expect(checkTarget(`https://${host}/hook`, env, noDns)).resolves.toEqual({
          ok: false,
          reason: expect.stringMatching(
            new RegExp(` resolves to an? ${escape(kind ?? '')} address$`),
          ) as unknown,
        });
      }
    },
  );

  const v4Edges = edges.filter((e) => e.family === 4);
  it.each(v4Edges.map((e) => [e.address] as const))('every IPv6 form carrying %s is refused', (address) => {
    const n = Number(edges.find((e) => e.address === address)?.value);
    const hi = (n >>> 16).toString(16);
    const lo = (n & 0xffff).toString(16);
    for (const form of [
      `::ffff:${address}`, // IPv4-mapped
      `::ffff:${hi}:${lo}`,
      `::ffff:0:${address}`, // IPv4-translated (RFC 2765)
      `::${address}`, // IPv4-compatible (deprecated)
      `64:ff9b::${address}`, // NAT64
      `64:ff9b::${hi}:${lo}`,
      `2002:${hi}:${lo}::1`, // 6to4
    ]) {
      expect([form, nonPublicKind(form)]).toEqual([form, expect.any(String)]);
    }
  });

  const outside = ROWS.flatMap((row) =>
    [row.first - 1n, row.last + 1n]
      .filter((v) => v >= 0n && v < (row.family === 4 ? 1n << 32n : 1n << 128n))
      .filter((v) => !firstRowOf(row.family, v))
      .filter((v) => row.family === 4 || (v >= GLOBAL_V6.first && v <= GLOBAL_V6.last))
      .map((v) => [text(row.family, v), row.cidr] as const),
  );
  it.each(outside)('%s (just outside %s) is public', (address) => {
    expect(nonPublicKind(address)).toBeUndefined();
  });

  it('an IPv6 form carrying a public IPv4 address is refused too, by its own range', () => {
    expect(nonPublicKind('::ffff:93.184.216.34')).toBe('IPv4-mapped');
    expect(nonPublicKind('64:ff9b::5db8:d822')).toBe('IPv4-IPv6 translation (NAT64)');
    expect(nonPublicKind('2002:5db8:d822::1')).toBe('6to4');
    expect(nonPublicKind('::93.184.216.34')).toBe('not global unicast');
  });

  it('the table covers the ranges the issue named, and 8 per cent of IPv4 is not all of it', () => {
    const named = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '192.88.99.0/24', '100.64.0.0/10'];
    for (const cidr of [...named, '198.18.0.0/15', '240.0.0.0/4', '2001:db8::/32', '64:ff9b::/96']) {
      expect(ROWS.map((r) => r.cidr)).toContain(cidr);
    }
    for (const cidr of ['::ffff:0:0/96', '2002::/16', 'fc00::/7', 'fe80::/10']) {
      expect(ROWS.map((r) => r.cidr)).toContain(cidr);
    }
    expect(nonPublicKind('93.184.216.34')).toBeUndefined();
    expect(nonPublicKind('2606:4700::1111')).toBeUndefined();
  });
});
