/**
 * The rules a webhook URL must meet: shared by auth-server (registration, the partners CLI) and
 * webhook-dispatcher (every delivery, with the connection pinned to the approved addresses).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { AppEnv } from '../config/config';

export type TargetVerdict =
  | {
      readonly ok: true;
      readonly url: URL;
      /** The addresses the guard approved: the connection goes to one of these, never elsewhere. */
      readonly addresses: readonly string[];
    }
  | { readonly ok: false; readonly reason: string };
export type Resolver = (hostname: string) => Promise<readonly string[]>;

const resolveAll: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map((a) => a.address);

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const V4_BLOCKED: readonly [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** The eight 16-bit groups of an IPv6 address (with `::` and a dotted IPv4 tail), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (isIP(dotted[1]) !== 4) return undefined;
    const n = ipv4ToInt(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4Of = (high: number, low: number) => [high >>> 8, high & 0xff, low >>> 8, low & 0xff].join('.');

function nonPublicV4(address: string): string | undefined {
  const n = ipv4ToInt(address);
  for (const [base, bits, kind] of V4_BLOCKED) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === (ipv4ToInt(base) & mask) >>> 0) return kind;
  }
  return undefined;
}

/**
 * IPv6: the special ranges, and the forms that carry an IPv4 address inside (mapped, translated,
 * compatible, NAT64, 6to4), judged by that IPv4 address: `[64:ff9b::a00:1]` reaches 10.0.0.1 through a NAT64
 * gateway just as surely as the dotted form. Teredo hides its client address, so it is refused.
 */
function nonPublicV6(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g) return 'unparseable';
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated)
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return nonPublicV4(v4Of(g[6], g[7]));
  // ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765 SIIT)
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return nonPublicV4(v4Of(g[6], g[7]));
  // 64:ff9b::/96, the well-known NAT64 prefix; 64:ff9b:1::/48 is for local use only
  if (g[0] === 0x64 && g[1] === 0xff9b)
    return zeros(2, 6) ? nonPublicV4(v4Of(g[6], g[7])) : 'NAT64 (local use)';
  if (g[0] === 0x2002) return nonPublicV4(v4Of(g[1], g[2])); // 6to4
  if (g[0] === 0x2001 && g[1] === 0) return 'Teredo tunnel';
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'documentation';
  if (g[0] === 0x100 && zeros(1, 4)) return 'discard';
  if ((g[0] & 0xfe00) === 0xfc00) return 'private (unique local)';
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'site-local (deprecated)';
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}

/** The kind of a non-public address, or undefined for a public one. */
export function nonPublicKind(address: string): string | undefined {
  return isIP(address) === 4 ? nonPublicV4(address) : nonPublicV6(address);
}

/**
 * The name Docker gives the machine that runs the containers (Docker Desktop; with
 * `extra_hosts: host-gateway` on Linux). A sandbox run under Docker Compose reaches a receiver on
 * the developer's machine through it; it resolves to a private address of Docker's network.
 */
export const DOCKER_HOST_NAME = 'host.docker.internal';

/**
 * SSRF guard (docs/rules.md, Webhooks): a delivery target must be HTTPS and must not resolve to a
 * loopback, private, link-local or otherwise non-public address. The sandbox also accepts plain
 * HTTP to loopback, so partners can test against a local receiver, and to `host.docker.internal`
 * when it resolves to private addresses only (the same receiver, seen from a container). Every address the name resolves
 * to is checked, and the approved addresses are returned so that the connection is pinned to them
 * (`pinnedLookup`): a name that answers differently the second time (DNS rebinding) cannot steer
 * the request to an address that was never checked.
 */
export async function checkTarget(
  url: string,
  appEnv: AppEnv,
  resolve: Resolver = resolveAll,
): Promise<TargetVerdict> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  let addresses: readonly string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    return { ok: false, reason: `${host} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} does not resolve` };
  const kinds = addresses.map(nonPublicKind);
  const sandboxLoopback = appEnv === 'sandbox' && kinds.every((k) => k === 'loopback');
  const sandboxDockerHost =
    appEnv === 'sandbox' &&
    host.toLowerCase() === DOCKER_HOST_NAME &&
    kinds.every((k) => k === 'private' || k === 'loopback');
  if (sandboxLoopback || sandboxDockerHost) {
    return target.protocol === 'http:' || target.protocol === 'https:'
      ? { ok: true, url: target, addresses }
      : { ok: false, reason: 'not HTTP' };
  }
  if (target.protocol !== 'https:') return { ok: false, reason: 'the target must use HTTPS' };
  const blocked = kinds.find((kind) => kind !== undefined);
  if (blocked !== undefined) return { ok: false, reason: `${host} resolves to a ${blocked} address` };
  return { ok: true, url: target, addresses };
}
