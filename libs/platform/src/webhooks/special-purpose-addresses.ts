/**
 * The addresses a webhook may never reach: every entry of IANA's Special-Purpose Address Registries
 * (RFC 6890), whatever their global reachability, plus multicast; the guard and its test read this
 * table. IPv6 rows outside 2000::/3 (refused anyway) give the refusal its name.
 */
export interface SpecialPurposeRange {
  /** CIDR, as the registry writes it. */
  readonly cidr: string;
  /** The registry's name, which the refusal gives as the address's kind. */
  readonly name: string;
  readonly rfc: string;
}

export const SPECIAL_PURPOSE_RANGES: readonly SpecialPurposeRange[] = [
  // IPv4 (most specific first where ranges nest: the first match names the refusal)
  { cidr: '0.0.0.0/32', name: 'unspecified', rfc: 'RFC 1122' },
  { cidr: '0.0.0.0/8', name: '"this network"', rfc: 'RFC 791' },
  { cidr: '10.0.0.0/8', name: 'private', rfc: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'shared (CGNAT)', rfc: 'RFC 6598' },
  { cidr: '127.0.0.0/8', name: 'loopback', rfc: 'RFC 1122' },
  { cidr: '169.254.0.0/16', name: 'link-local', rfc: 'RFC 3927' },
  { cidr: '172.16.0.0/12', name: 'private', rfc: 'RFC 1918' },
  { cidr: '192.0.0.0/29', name: 'IPv4 service continuity', rfc: 'RFC 7335' },
  { cidr: '192.0.0.8/32', name: 'IPv4 dummy address', rfc: 'RFC 7600' },
  { cidr: '192.0.0.9/32', name: 'PCP anycast', rfc: 'RFC 7723' },
  { cidr: '192.0.0.10/32', name: 'TURN anycast', rfc: 'RFC 8155' },
  { cidr: '192.0.0.170/32', name: 'NAT64/DNS64 discovery', rfc: 'RFC 8880' },
  { cidr: '192.0.0.171/32', name: 'NAT64/DNS64 discovery', rfc: 'RFC 8880' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments', rfc: 'RFC 6890' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', rfc: 'RFC 5737' },
  { cidr: '192.31.196.0/24', name: 'AS112', rfc: 'RFC 7535' },
  { cidr: '192.52.193.0/24', name: 'AMT', rfc: 'RFC 7450' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (deprecated)', rfc: 'RFC 7526' },
  { cidr: '192.168.0.0/16', name: 'private', rfc: 'RFC 1918' },
  { cidr: '192.175.48.0/24', name: 'AS112 direct delegation', rfc: 'RFC 7534' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', rfc: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', rfc: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', rfc: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'multicast', rfc: 'RFC 5771' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast', rfc: 'RFC 919' },
  { cidr: '240.0.0.0/4', name: 'reserved', rfc: 'RFC 1112' },
  // IPv6
  { cidr: '::/128', name: 'unspecified', rfc: 'RFC 4291' },
  { cidr: '::1/128', name: 'loopback', rfc: 'RFC 4291' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped', rfc: 'RFC 4291' },
  { cidr: '64:ff9b::/96', name: 'IPv4-IPv6 translation (NAT64)', rfc: 'RFC 6052' },
  { cidr: '64:ff9b:1::/48', name: 'IPv4-IPv6 translation (local use)', rfc: 'RFC 8215' },
  { cidr: '100::/64', name: 'discard-only', rfc: 'RFC 6666' },
  { cidr: '100:0:0:1::/64', name: 'dummy IPv6 prefix', rfc: 'RFC 9780' },
  { cidr: '2001::/32', name: 'Teredo', rfc: 'RFC 4380' },
  { cidr: '2001:1::1/128', name: 'PCP anycast', rfc: 'RFC 7723' },
  { cidr: '2001:1::2/128', name: 'TURN anycast', rfc: 'RFC 8155' },
  { cidr: '2001:1::3/128', name: 'DNS-SD SRP anycast', rfc: 'RFC 9665' },
  { cidr: '2001:2::/48', name: 'benchmarking', rfc: 'RFC 5180' },
  { cidr: '2001:3::/32', name: 'AMT', rfc: 'RFC 7450' },
  { cidr: '2001:4:112::/48', name: 'AS112', rfc: 'RFC 7535' },
  { cidr: '2001:10::/28', name: 'ORCHID (deprecated)', rfc: 'RFC 4843' },
  { cidr: '2001:20::/28', name: 'ORCHIDv2', rfc: 'RFC 7343' },
  { cidr: '2001:30::/28', name: 'drone remote ID (DET)', rfc: 'RFC 9374' },
  { cidr: '2001::/23', name: 'IETF protocol assignments', rfc: 'RFC 2928' },
  { cidr: '2001:db8::/32', name: 'documentation', rfc: 'RFC 3849' },
  { cidr: '2002::/16', name: '6to4', rfc: 'RFC 3056' },
  { cidr: '2620:4f:8000::/48', name: 'AS112 direct delegation', rfc: 'RFC 7534' },
  { cidr: '3fff::/20', name: 'documentation', rfc: 'RFC 9637' },
  { cidr: '5f00::/16', name: 'SRv6 SIDs', rfc: 'RFC 9602' },
  { cidr: 'fc00::/7', name: 'unique local', rfc: 'RFC 4193' },
  { cidr: 'fe80::/10', name: 'link-local', rfc: 'RFC 4291' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)', rfc: 'RFC 3879' },
  { cidr: 'ff00::/8', name: 'multicast', rfc: 'RFC 4291' },
];
