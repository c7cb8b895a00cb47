import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { AppEnv } from '@svc/platform';

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

/** The kind of a non-public address, or undefined for a public one. */
export function nonPublicKind(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return nonPublicKind(mapped[1]);
  if (isIP(address) === 4) {
    const n = ipv4ToInt(address);
    for (const [base, bits, kind] of V4_BLOCKED) {
      const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
      if ((n & mask) >>> 0 === (ipv4ToInt(base) & mask) >>> 0) return kind;
    }
    return undefined;
  }
  const a = address.toLowerCase();
  if (a === '::1') return 'loopback';
  if (a === '::') return 'unspecified';
  if (/^f[cd]/.test(a)) return 'private (unique local)';
  if (/^fe[89ab]/.test(a)) return 'link-local';
  if (a.startsWith('ff')) return 'multicast';
  return undefined;
}

/**
 * SSRF guard (decisions.md, Webhooks): a delivery target must be HTTPS and must not resolve to a
 * loopback, private, link-local or otherwise non-public address. The sandbox also accepts plain
 * HTTP to loopback, so partners can test against a local receiver. Every address the name resolves
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
  if (sandboxLoopback) {
    return target.protocol === 'http:' || target.protocol === 'https:'
      ? { ok: true, url: target, addresses }
      : { ok: false, reason: 'not HTTP' };
  }
  if (target.protocol !== 'https:') return { ok: false, reason: 'the target must use HTTPS' };
  const blocked = addresses.find((_, i) => kinds[i] !== undefined);
  if (blocked !== undefined) {
    return { ok: false, reason: `${host} resolves to a ${nonPublicKind(blocked)} address` };
  }
  return { ok: true, url: target, addresses };
}

/**
 * A `lookup` for `net.connect` that answers only with the addresses the guard approved, whatever
 * the name: the socket connects where the check looked, while the request keeps the partner's
 * hostname for the Host header and TLS (SNI and certificate check).
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const answers: LookupAddress[] = addresses.map((address) => ({
    address,
    family: isIP(address) === 6 ? 6 : 4,
  }));
  return (_hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = family === 0 ? answers : answers.filter((a) => a.family === family);
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = new Error('no approved address of the requested family');
      err.code = 'ENOTFOUND';
      callback(err, '', 4);
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, usable[0].address, usable[0].family);
  };
}
