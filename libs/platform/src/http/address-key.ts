import { isIPv6 } from 'node:net';
import { variable } from '../config/config';

/**
 * The prefix by which IPv6 clients share every per-address limit: a site gets a /64 or more (RFC
 * 6177), so a /128 key is unlimited. Whole bytes, so nginx's binary address is cut the same way.
 */
export const CLIENT_IPV6_PREFIX = variable(
  'prefix length by which IPv6 clients share each per-address limit (gateway `limit_req`, failed authentications, sign-in): a multiple of 8, 32–128; IPv4 clients count by their whole address',
  { default: '64' },
  (raw) => {
    const n = /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
    if (!(n >= 32 && n <= 128 && n % 8 === 0))
      throw new Error(`must be a multiple of 8 from 32 to 128, got "${raw}"`);
    return n;
  },
);

/** A client's limit key: IPv6 cut to `ipv6Prefix` bits (one text per network), mapped IPv4 as IPv4, else unchanged. */
export function addressLimitKey(address: string, ipv6Prefix: number): string;
export function addressLimitKey(address: string | undefined, ipv6Prefix: number): string | undefined;
export function addressLimitKey(address: string | undefined, ipv6Prefix: number): string | undefined {
  if (address === undefined) return undefined;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
  }
  const masked = groups.map((group, i) => {
    const kept = Math.min(16, Math.max(0, ipv6Prefix - i * 16));
    return kept === 0 ? 0 : group & (0xffff << (16 - kept)) & 0xffff;
  });
  return `${masked.map((g) => g.toString(16)).join(':')}/${ipv6Prefix}`;
}

/** The eight 16-bit groups of an IPv6 address (a zone id ignored), or undefined for anything else. */
export function ipv6Groups(text: string): number[] | undefined {
  const address = text.split('%')[0];
  if (!isIPv6(address)) return undefined;
  // A dotted IPv4 tail (`::ffff:192.0.2.1`) stands for the last two groups.
  let head = address;
  let tail: number[] = [];
  const lastColon = address.lastIndexOf(':');
  if (address.includes('.', lastColon)) {
    const [a, b, c, d] = address
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    tail = [(a << 8) | b, (c << 8) | d];
    // Keep a `::` that ends right before the tail; drop a single separating colon.
    head = address.slice(0, address[lastColon - 1] === ':' ? lastColon + 1 : lastColon);
  }
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const gap = head.indexOf('::');
  const wanted = 8 - tail.length;
  let groups: number[];
  if (gap < 0) {
    groups = hex(head);
  } else {
    const left = hex(head.slice(0, gap));
    const right = hex(head.slice(gap + 2));
    groups = [...left, ...Array<number>(wanted - left.length - right.length).fill(0), ...right];
  }
  groups = [...groups, ...tail];
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}
