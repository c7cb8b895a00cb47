/** The rules a webhook URL must meet, at registration (auth-server) and at every delivery (the dispatcher). */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { AppEnv } from '../config/config';
import { ipv6Groups } from '../http/address-key';
import { SPECIAL_PURPOSE_RANGES } from './special-purpose-addresses';

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

/** A parsed address: its family and its value as an unsigned integer of 32 or 128 bits. */
interface Address {
  readonly family: 4 | 6;
  readonly value: bigint;
}

function ipv4Value(address: string): bigint {
  return address.split('.').reduce((n, part) => n * 256n + BigInt(Number(part)), 0n);
}

function parseAddress(address: string): Address | undefined {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return { family, value: ipv4Value(address) };
  const groups = ipv6Groups(address);
  return groups && { family: 6, value: groups.reduce((n, g) => (n << 16n) | BigInt(g), 0n) };
}

/** A CIDR of the table as the first and last address it covers. */
export function cidrRange(cidr: string): { family: 4 | 6; first: bigint; last: bigint } {
  const [base, bitsText] = cidr.split('/');
  const address = parseAddress(base);
  const bits = Number(bitsText);
  if (!address) throw new Error(`not a CIDR: ${cidr}`);
  const width = address.family === 4 ? 32n : 128n;
  const hostBits = width - BigInt(bits);
  const first = (address.value >> hostBits) << hostBits;
  return { family: address.family, first, last: first + (1n << hostBits) - 1n };
}

const RANGES = SPECIAL_PURPOSE_RANGES.map((r) => ({ ...cidrRange(r.cidr), name: r.name }));

/** 2000::/3: the only IPv6 block IANA allocates as global unicast. */
const GLOBAL_UNICAST_V6 = cidrRange('2000::/3');

/**
 * The kind of a non-public address (its SPECIAL_PURPOSE_RANGES name), undefined for a public one.
 * IPv6 forms that reach IPv4 (mapped, NAT64, 6to4) are refused whatever address they carry.
 */
export function nonPublicKind(text: string): string | undefined {
  const address = parseAddress(text);
  if (!address) return 'unparseable';
  const range = RANGES.find(
    (r) => r.family === address.family && address.value >= r.first && address.value <= r.last,
  );
  if (range || address.family === 4) return range?.name;
  const global = address.value >= GLOBAL_UNICAST_V6.first && address.value <= GLOBAL_UNICAST_V6.last;
  return global ? undefined : 'not global unicast';
}

/** Docker's name for the host machine: a Compose sandbox reaches a receiver on the developer's machine by it. */
export const DOCKER_HOST_NAME = 'host.docker.internal';

/**
 * The ports the dispatcher's egress NetworkPolicy opens (a test holds the two equal): another port
 * would pass registration and then fail every attempt, so it is refused at registration.
 */
export const WEBHOOK_PORTS: readonly number[] = [443];

/**
 * SSRF guard (docs/rules.md, Webhooks): HTTPS on a WEBHOOK_PORTS port, every resolved address public
 * (the sandbox also takes HTTP to loopback or a private `host.docker.internal`). The approved
 * addresses are returned to pin the connection (`pinnedLookup`), so DNS rebinding cannot steer it.
 */
export async function checkTarget(
  url: string,
  appEnv: AppEnv,
  resolve: Resolver = resolveAll,
): Promise<TargetVerdict> {
  if (!URL.canParse(url)) return { ok: false, reason: 'not a URL' };
  const target = new URL(url);
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
  if (blocked !== undefined) {
    const article = /^(?!uni)[aeiou]/i.test(blocked) ? 'an' : 'a';
    return { ok: false, reason: `${host} resolves to ${article} ${blocked} address` };
  }
  const port = target.port === '' ? 443 : Number(target.port);
  if (!WEBHOOK_PORTS.includes(port)) {
    return { ok: false, reason: `port ${port} is not open to webhooks (${WEBHOOK_PORTS.join(', ')} only)` };
  }
  return { ok: true, url: target, addresses };
}
